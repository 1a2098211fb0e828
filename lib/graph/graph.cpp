#include "graph/graph.hpp"

namespace convbench {

std::string_view to_string(OpKind kind) {
  switch (kind) {
#define CONVBENCH_OP_KIND(k) \
  case OpKind::k:            \
    return #k;
#include "graph/op_kinds.def"
#undef CONVBENCH_OP_KIND
  }
  return "?";
}

std::string_view to_string(MemoryPolicy policy) {
  switch (policy) {
    case MemoryPolicy::none: return "none";
    case MemoryPolicy::recompute: return "recompute";
    case MemoryPolicy::inplace_abn: return "inplace_abn";
    case MemoryPolicy::inplace_act: return "inplace_act";
  }
  return "?";
}

const std::vector<std::string>& memory_policy_names() {
  static const std::vector<std::string> names = {"none", "recompute", "inplace_abn", "inplace_act"};
  return names;
}

std::optional<MemoryPolicy> parse_memory_policy(std::string_view text) {
  for (MemoryPolicy p :
       {MemoryPolicy::none, MemoryPolicy::recompute, MemoryPolicy::inplace_abn, MemoryPolicy::inplace_act})
    if (to_string(p) == text) return p;
  return std::nullopt;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> out(values.size());
  for (size_t i = 0; i < ops.size(); ++i)
    for (int v : ops[i].inputs) out[static_cast<size_t>(v)].push_back(static_cast<int>(i));
  return out;
}

const TensorDesc& Graph::conv_weight(const Op& conv) const {
  const std::vector<Param>& list = conv.conv.frozen ? buffers : params;
  const std::vector<int>& ids = conv.conv.frozen ? conv.buffers : conv.params;
  return list.at(static_cast<size_t>(ids.at(0))).desc;
}

std::vector<bool> Graph::requires_grad() const {
  std::vector<bool> rg(values.size(), false);
  for (const Op& op : ops) {
    bool needs = !op.params.empty();
    for (int v : op.inputs) needs = needs || rg[static_cast<size_t>(v)];
    rg[static_cast<size_t>(op.output)] = needs;
  }
  return rg;
}

}  // namespace convbench

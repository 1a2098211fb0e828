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

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> out(values.size());
  for (size_t i = 0; i < ops.size(); ++i)
    for (int v : ops[i].inputs) out[static_cast<size_t>(v)].push_back(static_cast<int>(i));
  return out;
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

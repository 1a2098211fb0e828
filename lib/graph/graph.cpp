#include "graph/graph.hpp"

namespace convbench {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::conv: return "conv";
    case OpKind::conv_transpose: return "conv_transpose";
    case OpKind::batch_norm: return "batch_norm";
    case OpKind::group_norm: return "group_norm";
    case OpKind::relu: return "relu";
    case OpKind::leaky_relu: return "leaky_relu";
    case OpKind::dropout: return "dropout";
    case OpKind::add: return "add";
    case OpKind::sub: return "sub";
    case OpKind::concat: return "concat";
    case OpKind::max_pool: return "max_pool";
    case OpKind::avg_pool: return "avg_pool";
    case OpKind::upsample: return "upsample";
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

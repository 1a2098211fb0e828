#include "analysis/variant_analysis.hpp"

#include "graph/checked_math.hpp"

namespace convbench {

VariantAnalysis analyze_variant(const Graph& graph, bool training, const WorkspaceQuery& workspace) {
  VariantAnalysis a;
  const std::vector<bool> rg = graph.requires_grad();
  for (const Op& op : graph.ops) {
    std::vector<bool> in_rg;
    for (int v : op.inputs) in_rg.push_back(rg[static_cast<size_t>(v)]);
    OpCounts c = count_op(graph, op, in_rg, training);
    a.params = checked_add(a.params, c.params);
    a.buffers = checked_add(a.buffers, c.buffers);
    a.macs += c.macs;
    a.flops += c.flops;
    a.bytes_forward = checked_add(a.bytes_forward, c.bytes_forward);
    a.bytes_backward = checked_add(a.bytes_backward, c.bytes_backward);
    a.per_op.push_back(c);
  }
  a.memory = predict_memory(graph, training, workspace);
  return a;
}

}  // namespace convbench

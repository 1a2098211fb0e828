#include "analysis/variant_analysis.hpp"

#include "analysis/recompute_plan.hpp"
#include "graph/checked_math.hpp"

namespace convbench {

VariantAnalysis analyze_variant(const Graph& graph, bool training, const WorkspaceQuery& workspace,
                                const StatisticsQuery& statistics) {
  VariantAnalysis a;
  const std::vector<bool> rg = graph.requires_grad();
  std::vector<bool> rerun(graph.ops.size(), false);
  if (training)
    for (const RecomputePlan& p : recompute_plans(graph))
      for (int i : p.rerun_ops) rerun[static_cast<size_t>(i)] = true;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    std::vector<bool> in_rg;
    for (int v : op.inputs) in_rg.push_back(rg[static_cast<size_t>(v)]);
    OpCounts c = count_op(graph, op, in_rg, training);
    if (rerun[i]) {  // its forward runs again in backward
      c.macs.recompute = c.macs.forward;
      c.flops.recompute = c.flops.forward;
      c.bytes_backward = checked_add(c.bytes_backward, c.bytes_forward);
    }
    a += c;
    a.per_op.push_back(c);
  }
  a.memory = predict_memory(graph, training, workspace, statistics);
  return a;
}

}  // namespace convbench

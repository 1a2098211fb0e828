#include "analysis/recompute_plan.hpp"

#include "ops/autograd_rules.hpp"

namespace convbench {

std::vector<int> segment_of_ops(const Graph& graph) {
  std::vector<int> of(graph.ops.size(), -1);
  for (size_t s = 0; s < graph.segments.size(); ++s)
    for (int i = graph.segments[s].first_op; i < graph.segments[s].end_op; ++i)
      of[static_cast<size_t>(i)] = static_cast<int>(s);
  return of;
}

std::vector<RecomputePlan> recompute_plans(const Graph& graph) {
  const std::vector<bool> rg = graph.requires_grad();
  std::vector<RecomputePlan> plans;
  // Per value: the segment (+1) that made it, and the last segment (+1) that listed it as a kept
  // input. Stamps, not a fresh flag vector per segment: a network with a segment per slot would
  // otherwise clear one entry per value for each of its slots.
  std::vector<size_t> made_in(graph.values.size(), 0), kept_by(graph.values.size(), 0);
  for (size_t s = 0; s < graph.segments.size(); ++s) {
    const RecomputeSegment& seg = graph.segments[s];
    RecomputePlan p;
    p.segment = static_cast<int>(s);
    int last_saving = -1, first_saving = -1;
    bool last_saves_products = false;
    for (int i = seg.first_op; i < seg.end_op; ++i) {
      const Op& op = graph.ops[static_cast<size_t>(i)];
      for (int v : op.inputs) {
        const auto value = static_cast<size_t>(v);
        if (made_in[value] == s + 1 || kept_by[value] == s + 1) continue;
        kept_by[value] = s + 1;
        p.kept_inputs.push_back(v);
      }
      made_in[static_cast<size_t>(op.output)] = s + 1;
      if (!rg[static_cast<size_t>(op.output)]) continue;  // no backward: saves nothing
      const SavedTensors saved = saved_tensors(op, inputs_requiring_grad(op, rg));
      const bool products = saved.output || !aux_tensors(graph, op).empty();
      if (saved.inputs.empty() && !products) continue;
      if (first_saving < 0) first_saving = i;
      last_saving = i;
      last_saves_products = products;
    }
    p.keeps_inputs = last_saving >= 0;
    if (p.keeps_inputs) {
      p.trigger_op = last_saving;
      p.release_op = first_saving;
      const int end = last_saves_products ? last_saving + 1 : last_saving;
      for (int i = seg.first_op; i < end; ++i) p.rerun_ops.push_back(i);
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

}  // namespace convbench

#include "explain/variant_facts.hpp"

#include <algorithm>
#include <map>

#include "analysis/recompute_plan.hpp"
#include "explain/stage_breakdown.hpp"
#include "ops/op_registry.hpp"
#include "results/trust.hpp"
#include "runtime/loss_scaler.hpp"

namespace convbench {
namespace {

// The MACs, FLOPs and bytes `explain` states of the variant (a VariantAnalysis is its ops' summed
// OpCounts) or of one op: the forward pass's in inference, the whole step's in training, as the
// headline time.
template <class Facts>
void set_step_counts(Facts& to, const OpCounts& c, bool training) {
  to.macs = training ? c.macs.forward + c.macs.backward() : c.macs.forward;
  to.flops = training ? c.flops.forward + c.flops.backward() : c.flops.forward;
  to.bytes = training ? c.bytes_forward + c.bytes_backward : c.bytes_forward;
}

}  // namespace

VariantFacts collect_variant_facts(const Graph& graph, const VariantAnalysis& analysis, const ResultRow& row) {
  VariantFacts f;
  f.block = row.block;
  f.variant = row.variant;
  f.kind = row.kind;
  f.point_label = row.point_label;
  f.is_baseline = row.is_baseline;
  f.training = is_training(row);
  f.dtype = row.dtype;
  f.compute_dtype = compute_dtype(row);
  f.layout = row.layout;
  f.device = row.device;
  if (const auto& t = headline_time(row); t && row.status == RunStatus::ok) f.time_ms = t->median;
  f.params = analysis.params;
  set_step_counts(f, analysis, f.training);

  const MemoryPrediction& m = analysis.memory;
  f.memory.peak_bytes = m.peak_bytes;
  if (has_measured_peak(row)) f.memory.measured_peak_bytes = row.measured->peak_bytes;
  f.memory.at_peak = m.at_peak;
  f.memory.peak_op = m.peak_op;
  f.memory.peak_phase = m.peak_phase;
  f.memory.saved_bytes = m.saved_bytes;
  f.memory.saved = m.saved;
  // Each counted tensor to the first op that keeps it; a recompute segment's kept input ("checkpoint
  // of SEGMENT") to the segment's first op, so that the ops' bytes still add up to the total.
  std::map<std::string, std::string> segment_start;
  for (const RecomputeSegment& seg : graph.segments)
    if (seg.first_op < seg.end_op)
      segment_start["checkpoint of " + seg.name] = graph.ops.at(static_cast<size_t>(seg.first_op)).name;
  std::map<std::string, int64_t> saved_by_op;
  for (const SavedTensorFacts& s : m.saved) {
    if (!s.counted || s.saved_by.empty()) continue;
    const auto start = segment_start.find(s.saved_by.front());
    saved_by_op[start != segment_start.end() ? start->second : s.saved_by.front()] += s.bytes;
  }

  const std::vector<bool> rg = graph.requires_grad();
  double op_sum = 0;
  bool all_timed = !graph.ops.empty();
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    const OpCounts& c = analysis.per_op[i];
    OpFacts o;
    o.name = op.name;
    o.kind = std::string(to_string(op.kind));
    set_step_counts(o, c, f.training);
    o.time_ms = op_headline_ms(row, op.name);
    for (int p : op.params) o.params += graph.params.at(static_cast<size_t>(p)).desc.numel();
    if (const auto it = saved_by_op.find(op.name); it != saved_by_op.end()) o.saved_bytes = it->second;
    if (o.time_ms) {
      op_sum += *o.time_ms;
      if (f.time_ms && *f.time_ms > 0) o.time_share = *o.time_ms / *f.time_ms;
    } else {
      all_timed = false;
    }
    ++f.launches.op_runs;
    if (f.training && rg[static_cast<size_t>(op.output)]) ++f.launches.op_runs;  // its backward
    f.ops.push_back(std::move(o));
  }
  f.precision.precision = std::string(to_string(graph.precision));
  if (const std::optional<DType> low = autocast_dtype(graph.precision)) {
    f.precision.low_dtype = std::string(to_string(*low));
    for (const Op& op : graph.ops) {
      if (op.kind == OpKind::cast) f.precision.casts.push_back(op.name);
      if (op.param_cast) f.precision.low_ops.push_back(op.name);
    }
    // The memory model names a weight's copy "<dtype> copy of <weight>".
    for (const SavedTensorFacts& s : m.saved)
      if (s.counted && s.what.rfind(f.precision.low_dtype + " copy of ", 0) == 0)
        f.precision.saved_weight_copy_bytes += s.bytes;
    if (uses_loss_scaling(graph, f.training)) f.precision.loss_scaled_gradient_bytes = graph.desc(graph.output).bytes();
    double cast_ms = 0;
    bool casts_timed = !f.precision.casts.empty();
    for (const std::string& cast : f.precision.casts) {
      const auto ms = op_headline_ms(row, cast);
      casts_timed = casts_timed && ms.has_value();
      cast_ms += ms.value_or(0);
    }
    if (casts_timed) f.precision.cast_ms = cast_ms;
  }
  f.policy.policy = std::string(to_string(graph.memory_policy));
  for (const Op& op : graph.ops) {
    const bool activation = op_traits(op.kind).activation;
    if (op.kind == OpKind::batch_norm_act) f.policy.fused.push_back(op.name);
    if (op.in_place)
      f.policy.in_place.push_back(op.name);
    else if ((graph.memory_policy == MemoryPolicy::inplace_act && activation) ||
             (graph.memory_policy == MemoryPolicy::inplace_abn && op.kind == OpKind::batch_norm_act))
      f.policy.not_in_place.push_back(op.name);
  }
  for (const RecomputeSegment& s : graph.segments) f.policy.segments.push_back(s.name);
  if (f.training)
    for (const RecomputePlan& p : recompute_plans(graph)) {
      f.policy.rerun_ops += static_cast<int>(p.rerun_ops.size());
      f.launches.op_runs += static_cast<int>(p.rerun_ops.size());  // the forwards run again
    }
  f.policy.recompute_flops = f.training ? analysis.flops.recompute : 0;
  if (all_timed) {
    f.launches.op_time_sum_ms = op_sum;
    if (f.time_ms && *f.time_ms > 0) f.launches.outside_ops_share = std::max(0.0, 1.0 - op_sum / *f.time_ms);
  }
  if (is_network(row)) f.stages = stage_breakdown(f.ops, f.time_ms);
  // The run's status when it failed, else how far its times can be trusted (results/trust.hpp).
  f.trust = row.status == RunStatus::ok ? to_string(assess_trust(row).level) : to_string(row.status);
  return f;
}

}  // namespace convbench

#include "explain/explain_rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "results/runtime_names.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

std::string ms_text(double ms) { return format_significant(ms, 3) + " ms"; }
std::string percent(double share) { return format_fixed(share * 100.0, 0) + "%"; }
std::string signed_mib(int64_t bytes) { return (bytes >= 0 ? "+" : "-") + format_mib(bytes >= 0 ? bytes : -bytes); }

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " and " : ", ";
    s += names[i];
  }
  return s;
}

std::string phase_name(const VariantFacts& f) { return f.training ? "step" : "forward pass"; }

// Measured faster than the floor the limits allow: the limits, not the op, are what is off.
bool beyond_floor(const OpFacts& o) { return o.of_floor && *o.of_floor > 1.0; }

const OpFacts* find_op(const VariantFacts& f, const std::string& name) {
  for (const OpFacts& o : f.ops)
    if (o.name == name) return &o;
  return nullptr;
}

// "fewer FLOPs, yet slower" and its mirror: the finding seed 000 asked about.
std::string work_against_time(const VariantFacts& v, const VariantFacts& b) {
  if (b.flops <= 0 || !v.time_ms || !b.time_ms || *b.time_ms <= 0) return "";
  const double fx = static_cast<double>(v.flops) / static_cast<double>(b.flops), tx = *v.time_ms / *b.time_ms;
  // The time is the runtime's, not the block's: another runtime can rank the two the other way.
  std::string s = v.variant + " does " + format_ratio(fx) + " the FLOPs of " + b.variant + " and takes " +
                  format_ratio(tx) + " its " + phase_name(v) + " time on " + runtime_phrase("convbench", v.device);
  if (fx < 1 - kSameRatio && tx > 1 + kSameRatio) return s + ": fewer FLOPs, yet slower.";
  if (fx > 1 + kSameRatio && tx < 1 - kSameRatio) return s + ": more FLOPs, yet faster.";
  return s + ".";
}

std::string kinds_sentence(const VariantExplanation& v, const VariantFacts& b) {
  const VariantFacts& f = v.facts;
  if (!f.time_ms || !b.time_ms || v.by_kind.empty()) return "";
  const double delta = *f.time_ms - *b.time_ms;
  double total = 0;
  for (const KindDelta& k : v.by_kind) total += std::fabs(k.delta_ms());
  if (total <= 0) return "";
  std::string s = "Its " + phase_name(f) + " is " + ms_text(std::fabs(delta)) + (delta >= 0 ? " slower" : " faster") +
                  "; by op kind: ";
  double covered = 0;
  for (size_t i = 0; i < v.by_kind.size() && i < 3; ++i) {
    const KindDelta& k = v.by_kind[i];
    if (i > 0) s += ", ";
    s += k.kind + " " + (k.delta_ms() >= 0 ? "+" : "-") + ms_text(std::fabs(k.delta_ms())) + " (" +
         std::to_string(k.ops) + (k.ops == 1 ? " op" : " ops") + " against " + std::to_string(k.base_ops) + ")";
    covered += std::fabs(k.delta_ms());
    if (covered >= kMainKindsShare * total) break;
  }
  return s + ".";
}

// A GPU's datasheet that did not run these rows (--limits NAME): per bound, which of `ops` would be
// compute- or memory-bound there and what their floors there add up to. A floor is a lower bound
// on that GPU (every FLOP at its dense peak, every byte moved once at full bandwidth), never a
// prediction of its time, and nothing measured here is compared with it.
std::vector<std::string> other_device_bound_sentences(const VariantFacts& f, const std::vector<std::string>& ops,
                                                      const DeviceLimits& limits) {
  std::vector<std::string> out;
  const double ridge = limits.peak_flops / limits.bandwidth_bytes_per_s;
  for (const Bound bound : {Bound::memory, Bound::compute}) {
    std::vector<std::string> names;
    double lo = 0, hi = 0, floor_sum = 0;
    for (const std::string& name : ops) {
      const OpFacts* o = find_op(f, name);
      if (!o || o->bound != bound || !o->floor_ms) continue;
      const double ai = o->intensity();
      lo = names.empty() ? ai : std::min(lo, ai);
      hi = names.empty() ? ai : std::max(hi, ai);
      names.push_back(name);
      floor_sum += *o->floor_ms;
    }
    if (names.empty()) continue;
    const bool one = names.size() == 1;
    const std::string range = format_significant(lo, 2) + (hi > lo ? "-" + format_significant(hi, 2) : "");
    out.push_back(join_names(names) + (one ? " is " : " are ") + to_string(bound) + "-bound on " + limits.datasheet +
                  ": arithmetic intensity " + range + " FLOP/B, " + (bound == Bound::memory ? "below" : "at or above") +
                  " its ridge point " + format_significant(ridge, 2) + " FLOP/B; " +
                  (one ? "its floor" : "their floors") + " on " + limits.datasheet + " from its datasheet " +
                  (one ? "is " : "add up to ") + ms_text(floor_sum) + ": a lower bound, not a prediction.");
  }
  return out;
}

// One sentence per bound among the main ops: which ops, their intensity against the ridge
// point, and how close they come to their floor (time-weighted over the group). An op that ran
// faster than its floor is left out of that share: its "of floor" is not a fact about the op but
// evidence that the limits are too low (beyond_floor_sentences says so).
std::vector<std::string> bound_sentences(const VariantExplanation& v, const DeviceLimits& limits) {
  if (limits.other_device) return other_device_bound_sentences(v.facts, v.main_ops, limits);
  std::vector<std::string> out;
  const double ridge = limits.peak_flops / limits.bandwidth_bytes_per_s;
  for (const Bound bound : {Bound::memory, Bound::compute}) {
    std::vector<std::string> names, within;
    double lo = 0, hi = 0, floor_sum = 0, time_sum = 0;
    for (const std::string& name : v.main_ops) {
      const OpFacts* o = find_op(v.facts, name);
      if (!o || o->bound != bound || !o->time_ms || !o->floor_ms) continue;
      const double ai = o->intensity();
      lo = names.empty() ? ai : std::min(lo, ai);
      hi = names.empty() ? ai : std::max(hi, ai);
      names.push_back(name);
      if (beyond_floor(*o)) continue;
      within.push_back(name);
      floor_sum += *o->floor_ms;
      time_sum += *o->time_ms;
    }
    if (names.empty()) continue;
    const bool one = names.size() == 1;
    const std::string range = format_significant(lo, 2) + (hi > lo ? "-" + format_significant(hi, 2) : "");
    std::string s = join_names(names) + (one ? " is " : " are ") + to_string(bound) + "-bound: arithmetic intensity " +
                    range + " FLOP/B, " + (bound == Bound::memory ? "below" : "at or above") + " the ridge point " +
                    format_significant(ridge, 2) + " FLOP/B";
    if (!within.empty() && time_sum > 0) {
      const bool all = within.size() == names.size(), one_within = within.size() == 1;
      s += "; " +
           (all ? std::string(one ? "it runs" : "they run") : join_names(within) + (one_within ? " runs" : " run")) +
           " at " + percent(floor_sum / time_sum) + " of " + (one_within ? "its" : "their") + " roofline floor";
    }
    out.push_back(s + ".");
  }
  return out;
}

// Ops whose measured time is below the floor drawn from the limits: no op runs faster than its
// floor on the device the limits describe, so the limits are too low. A compute-bound op says so
// plainly (no cache makes FLOPs faster); a memory-bound one may also have found its data in a
// cache, which the floor (every byte from memory) does not count.
std::vector<std::string> beyond_floor_sentences(const VariantFacts& f, const DeviceLimits& limits) {
  std::vector<std::string> out;
  const std::string remedy = limits.remedy.empty() ? "" : "; " + limits.remedy;
  for (const Bound bound : {Bound::compute, Bound::memory}) {
    std::vector<std::string> names, shares;
    for (const OpFacts& o : f.ops)
      if (o.bound == bound && beyond_floor(o)) {
        names.push_back(o.name);
        shares.push_back(percent(*o.of_floor));
      }
    if (names.empty()) continue;
    const std::string ran =
        join_names(names) + " ran faster than the floor drawn from these limits (" + join_names(shares) + " of it)";
    out.push_back(bound == Bound::compute
                      ? ran + ": the limits are too low, as no cache makes FLOPs faster" + remedy + "."
                      : ran + ": the bandwidth is too low, or " + (names.size() == 1 ? "its" : "their") +
                            " data stayed in a cache, which the floor does not count" + remedy + ".");
  }
  return out;
}

// Without measured times (--memory-only) the bound still follows from the counts: each op's
// intensity against the ridge point.
std::vector<std::string> counted_bound_sentences(const VariantFacts& f, const DeviceLimits& limits) {
  if (limits.other_device) {
    std::vector<std::string> all;
    for (const OpFacts& o : f.ops) all.push_back(o.name);
    std::vector<std::string> out = other_device_bound_sentences(f, all, limits);
    for (std::string& s : out) s = "Not timed; by counted intensity " + s;
    return out;
  }
  std::vector<std::string> out;
  const double ridge = limits.peak_flops / limits.bandwidth_bytes_per_s;
  for (const Bound bound : {Bound::memory, Bound::compute}) {
    std::vector<std::string> names;
    for (const OpFacts& o : f.ops)
      if (o.bound == bound) names.push_back(o.name);
    if (names.empty()) continue;
    out.push_back("Not timed; by counted intensity " + join_names(names) + (names.size() == 1 ? " is " : " are ") +
                  to_string(bound) + "-bound (" + (bound == Bound::memory ? "below" : "at or above") +
                  " the ridge point " + format_significant(ridge, 2) + " FLOP/B).");
  }
  return out;
}

std::string launches_sentence(const VariantFacts& f, const VariantFacts* b) {
  std::string s = "It runs " + std::to_string(f.launches.op_runs) + " ops per " + phase_name(f);
  if (b) s += " (" + b->variant + ": " + std::to_string(b->launches.op_runs) + ")";
  if (f.launches.outside_ops_share) {
    const double out = *f.launches.outside_ops_share;
    s += "; " + percent(out) + " of its " + phase_name(f) + " time is in no op";
    if (out >= kLaunchBoundShare) s += ": launch-bound, host work and launches between ops set its time";
  }
  return s + ".";
}

// The ops that keep counted saved tensors (OpFacts::saved_bytes), largest first, ties by name.
std::vector<std::pair<std::string, int64_t>> saved_by_op(const VariantFacts& f) {
  std::vector<std::pair<std::string, int64_t>> v;
  for (const OpFacts& o : f.ops)
    if (o.saved_bytes > 0) v.emplace_back(o.name, o.saved_bytes);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return v;
}

std::string memory_sentence(const VariantFacts& f, const VariantFacts* b) {
  std::string s;
  if (f.training) {
    const auto by = saved_by_op(f);
    int tensors = 0;
    for (const SavedTensorFacts& t : f.memory.saved) tensors += t.counted ? 1 : 0;
    s = "It saves " + format_mib(f.memory.saved_bytes) + " for backward (" + std::to_string(tensors) +
        (tensors == 1 ? " tensor" : " tensors");
    if (b && b->memory.saved_bytes > 0)
      s += ", " + format_ratio(static_cast<double>(f.memory.saved_bytes) / static_cast<double>(b->memory.saved_bytes)) +
           " " + b->variant + "'s, " + signed_mib(f.memory.saved_bytes - b->memory.saved_bytes);
    s += ")";
    if (!by.empty()) {
      s += ": ";
      for (size_t i = 0; i < by.size() && i < 3; ++i)
        s += (i ? ", " : "") + by[i].first + " " + format_mib(by[i].second);
      if (by.size() > 3) s += " and " + std::to_string(by.size() - 3) + " more";
    }
    s += ". ";
  }
  s += "Its peak is " + format_mib(f.memory.peak_bytes);
  if (b && b->memory.peak_bytes > 0)
    s += " (" + format_ratio(static_cast<double>(f.memory.peak_bytes) / static_cast<double>(b->memory.peak_bytes)) +
         ", " + signed_mib(f.memory.peak_bytes - b->memory.peak_bytes) + ")";
  if (!f.memory.peak_op.empty())
    s += f.memory.peak_phase == "recompute"
             ? ", reached while " + f.memory.peak_op + "'s forward runs again in backward"
             : ", reached in the " + f.memory.peak_phase + " of " + f.memory.peak_op;
  return s + ".";
}

// What the variant's memory policy did: which ops run in place or fused, what is recomputed.
std::string policy_sentence(const VariantFacts& f) {
  const PolicyFacts& p = f.policy;
  if (p.policy == "none") return "";
  std::string s = "Memory policy " + p.policy + ": ";
  if (p.policy == "recompute") {
    const bool one = p.segments.size() == 1;
    s += std::to_string(p.segments.size()) + (one ? " segment" : " segments") + " (" + join_names(p.segments) +
         (one ? ") keeps only its inputs in forward" : ") keep only their inputs in forward");
    if (f.training)
      s += "; backward runs " + std::to_string(p.rerun_ops) + " ops' forward again (" + format_giga(p.recompute_flops) +
           " GFLOP more)";
    return s + ".";
  }
  if (p.policy == "inplace_abn")
    s += join_names(p.fused) + " " + (p.fused.size() == 1 ? "is" : "are") +
         " batch norm and leaky ReLU as one op that saves its output; ";
  if (!p.in_place.empty()) s += join_names(p.in_place) + (p.in_place.size() == 1 ? " runs" : " run") + " in place";
  if (!p.not_in_place.empty())
    s += std::string(p.in_place.empty() ? "" : "; ") + join_names(p.not_in_place) +
         (p.not_in_place.size() == 1 ? " does" : " do") +
         " not (its input is the block input, is read by another op, or is saved for backward by an op)";
  return s + ".";
}

// What mixed precision changed: which ops compute in the low dtype with copies of their weights,
// where casts were inserted, what stays float32.
std::string precision_sentence(const VariantFacts& f) {
  const PrecisionFacts& p = f.precision;
  if (p.precision == "plain") return "";
  std::string s = "Precision " + p.precision + " (torch.autocast): ";
  if (p.low_ops.empty()) {
    s += "no op computes in " + p.low_dtype;
  } else {
    s += join_names(p.low_ops) + (p.low_ops.size() == 1 ? " computes" : " compute") + " in " + p.low_dtype + " with " +
         p.low_dtype + " copies of the float32 weights";
    if (f.training && p.saved_weight_copy_bytes > 0)
      s += " (" + format_bytes(p.saved_weight_copy_bytes) + " of them kept for backward)";
  }
  if (!p.casts.empty()) {
    s += "; " + std::to_string(p.casts.size()) + (p.casts.size() == 1 ? " cast converts" : " casts convert") +
         " activations (" + join_names(p.casts) + ")";
    if (p.cast_ms) {
      s += ", in " + ms_text(*p.cast_ms);
      if (f.time_ms && *f.time_ms > 0) s += " (" + percent(*p.cast_ms / *f.time_ms) + " of the " + phase_name(f) + ")";
    }
  }
  s += "; parameters, their gradients and the norms' statistics stay float32";
  if (p.loss_scaled_gradient_bytes > 0)
    s += "; float16 scales the loss as GradScaler does: backward starts from a scaled copy of the upstream gradient (" +
         format_bytes(p.loss_scaled_gradient_bytes) +
         "), then every parameter gradient is unscaled and checked for inf and NaN, and the scale backs off or grows";
  if (p.plain)
    s += ". Against float32 (precision plain) it keeps " + format_bytes(f.memory.saved_bytes) +
         " for backward instead of " + format_bytes(p.plain->saved_bytes) + ", peaks at " +
         format_bytes(f.memory.peak_bytes) + " instead of " + format_bytes(p.plain->peak_bytes) +
         " (predicted) and moves " + format_bytes(f.bytes) + " instead of " + format_bytes(p.plain->bytes) +
         " in its " + phase_name(f);
  return s + ".";
}

}  // namespace

const char* to_string(Bound b) {
  switch (b) {
    case Bound::memory: return "memory";
    case Bound::compute: return "compute";
    case Bound::unknown: break;
  }
  return "";
}

void classify_op(OpFacts& op, const DeviceLimits& limits) {
  if (limits.peak_flops <= 0 || limits.bandwidth_bytes_per_s <= 0) return;
  const double ridge = limits.peak_flops / limits.bandwidth_bytes_per_s;
  op.bound = op.intensity() >= ridge ? Bound::compute : Bound::memory;
  const double floor_s = std::max(static_cast<double>(op.flops) / limits.peak_flops,
                                  static_cast<double>(op.bytes) / limits.bandwidth_bytes_per_s);
  op.floor_ms = floor_s * 1e3;
  // A floor on another GPU says nothing about a time measured here.
  if (op.time_ms && *op.time_ms > 0 && !limits.other_device) op.of_floor = *op.floor_ms / *op.time_ms;
}

std::vector<KindDelta> time_by_kind(const VariantFacts& v, const VariantFacts& base) {
  std::map<std::string, KindDelta> by;
  // Adds each timed op of `f` to its kind's count and time (the variant's or the baseline's).
  auto tally = [&](const VariantFacts& f, int KindDelta::*ops, double KindDelta::*ms) {
    for (const OpFacts& o : f.ops) {
      if (!o.time_ms) continue;
      KindDelta& k = by[o.kind];
      k.kind = o.kind;
      ++(k.*ops);
      k.*ms += *o.time_ms;
    }
  };
  tally(v, &KindDelta::ops, &KindDelta::ms);
  tally(base, &KindDelta::base_ops, &KindDelta::base_ms);
  std::vector<KindDelta> out;
  for (auto& [kind, k] : by) out.push_back(k);
  std::stable_sort(out.begin(), out.end(), [](const KindDelta& a, const KindDelta& b) {
    return std::fabs(a.delta_ms()) > std::fabs(b.delta_ms());
  });
  return out;
}

std::vector<std::string> main_ops(const VariantFacts& v) {
  std::vector<const OpFacts*> timed;
  double total = 0;
  for (const OpFacts& o : v.ops)
    if (o.time_ms) {
      timed.push_back(&o);
      total += *o.time_ms;
    }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const OpFacts* a, const OpFacts* b) { return *a->time_ms > *b->time_ms; });
  std::vector<std::string> out;
  double covered = 0;
  for (const OpFacts* o : timed) {
    if (total <= 0 || covered >= kMainOpsShare * total) break;
    out.push_back(o->name);
    covered += *o->time_ms;
  }
  return out;
}

std::vector<std::string> explain_sentences(const VariantExplanation& v, const VariantExplanation* base,
                                           const std::optional<DeviceLimits>& limits) {
  const VariantFacts& f = v.facts;
  const VariantFacts* b = base ? &base->facts : nullptr;
  std::vector<std::string> out;
  auto add = [&](const std::string& s) {
    if (!s.empty()) out.push_back(s);
  };
  if (f.trust != "ok" && !f.trust.empty())
    add("Its run is " + f.trust + ": read its times with care (see the warnings); the counts and memory stand.");
  if (b) {
    add(work_against_time(f, *b));
    add(kinds_sentence(v, *b));
  }
  if (limits && !v.main_ops.empty()) {
    for (const std::string& s : bound_sentences(v, *limits)) add(s);
    for (const std::string& s : beyond_floor_sentences(f, *limits)) add(s);
  } else if (limits) {
    for (const std::string& s : counted_bound_sentences(f, *limits)) add(s);
  } else if (!v.main_ops.empty()) {
    add("Its main ops are " + join_names(v.main_ops) +
        "; the device's limits are unknown, so whether they are compute- or memory-bound is not said (give "
        "--peak-flops and --bandwidth).");
  }
  add(launches_sentence(f, b));
  add(memory_sentence(f, b));
  add(policy_sentence(f));
  add(precision_sentence(f));
  return out;
}

Explanation build_explanation(const std::vector<VariantFacts>& facts, const std::string& device,
                              const std::optional<DeviceLimits>& limits, const std::string& limits_dtype) {
  Explanation e;
  e.device = device;
  e.limits = limits;
  e.limits_dtype = limits_dtype;
  auto limits_for = [&](const VariantFacts& f) {
    return limits && (limits_dtype.empty() || f.compute_dtype == limits_dtype) ? limits : std::nullopt;
  };
  for (const VariantFacts& f : facts) {
    auto it = std::find_if(e.blocks.begin(), e.blocks.end(), [&](const BlockExplanation& b) {
      return b.block == f.block && b.point_label == f.point_label;
    });
    if (it == e.blocks.end()) {
      e.blocks.push_back({f.block, f.point_label, "", {}});
      it = e.blocks.end() - 1;
    }
    VariantExplanation v;
    v.facts = f;
    if (const auto l = limits_for(f))
      for (OpFacts& o : v.facts.ops) classify_op(o, *l);
    v.main_ops = main_ops(v.facts);
    if (f.is_baseline) {
      it->baseline = f.variant;
      it->variants.insert(it->variants.begin(), std::move(v));
    } else {
      it->variants.push_back(std::move(v));
    }
  }
  for (BlockExplanation& b : e.blocks) {
    if (b.variants.empty()) continue;
    if (b.baseline.empty()) b.baseline = b.variants.front().facts.variant;  // as the tables do
    const VariantExplanation& base = b.variants.front();
    for (size_t i = 0; i < b.variants.size(); ++i) {
      VariantExplanation& v = b.variants[i];
      if (i > 0) v.by_kind = time_by_kind(v.facts, base.facts);
      v.sentences = explain_sentences(v, i > 0 ? &b.variants.front() : nullptr, limits_for(v.facts));
    }
  }
  return e;
}

}  // namespace convbench

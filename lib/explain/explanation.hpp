// What `convbench explain` says about a variant, as facts: counted (FLOPs, bytes, saved tensors
// from the memory model), measured (per-op and step times, the measured peak) and derived from
// the device's limits (intensity, bound, fraction of the floor). The sentences are generated from
// these facts by fixed rules (explain/explain_rules.hpp), never written by hand, so every number
// a sentence quotes is also in the JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/memory_model.hpp"
#include "results/device_limits.hpp"
#include "runtime/memory_stats.hpp"

namespace convbench {

// Where an op sits against the device's ridge point (peak FLOP/s over bandwidth): at or above it
// compute-bound, below it memory-bound; unknown when the limits are.
enum class Bound { unknown, memory, compute };
// "memory", "compute", "" for unknown: the word the sentences, the table and the JSON use.
const char* to_string(Bound b);

// One op over the row's headline phase: forward + backward in training, forward in inference.
struct OpFacts {
  std::string name, kind;
  int64_t macs = 0, flops = 0;
  int64_t bytes = 0;              // minimum traffic: every tensor it reads or writes, once
  std::optional<double> time_ms;  // measured with --per-op (the device synchronised around it)
  int64_t saved_bytes = 0;        // counted saved tensors this op keeps first (see MemoryFacts)
  int64_t params = 0;             // elements of the op's trainable parameters

  // Derived from the device's limits (absent when they are unknown).
  double intensity() const { return bytes > 0 ? static_cast<double>(flops) / static_cast<double>(bytes) : 0; }
  Bound bound = Bound::unknown;
  std::optional<double> floor_ms;    // max(FLOPs / peak, bytes / bandwidth)
  std::optional<double> of_floor;    // floor_ms / time_ms: 1 means at the roofline
  std::optional<double> time_share;  // time_ms / the row's headline time
};

// A network's stage: the ops whose names start with "<name>." (explain/stage_breakdown.hpp).
struct StageFacts {
  std::string name;
  int ops = 0;
  int64_t params = 0, macs = 0, flops = 0, saved_bytes = 0;
  std::optional<double> time_ms;     // its ops' per-op times added up, when every op has one
  std::optional<double> time_share;  // time_ms / the row's headline time
};

struct MemoryFacts {
  int64_t peak_bytes = 0;                      // predicted (with the backend's workspace)
  std::optional<int64_t> measured_peak_bytes;  // measured by the allocator, when run
  CategoryBytes at_peak{};                     // predicted breakdown of the peak
  std::string peak_op, peak_phase;             // what was running at the peak
  int64_t saved_bytes = 0;                     // saved for backward at the end of forward
  std::vector<SavedTensorFacts> saved;         // each tensor, in forward order
};

// Ops run per step and the time in none of them.
struct LaunchFacts {
  int op_runs = 0;                          // forward ops, plus each recorded op's backward in training
  std::optional<double> op_time_sum_ms;     // the per-op times added up
  std::optional<double> outside_ops_share;  // 1 - sum / headline time, floored at 0
};

// What the variant's memory policy did (configs/README.md "Memory policies"), from its graph.
struct PolicyFacts {
  std::string policy = "none";
  std::vector<std::string> in_place;      // ops that write over their input
  std::vector<std::string> not_in_place;  // activations (inplace_act) or fused norms (inplace_abn) that cannot
  std::vector<std::string> fused;         // inplace_abn: the batch_norm_act ops
  std::vector<std::string> segments;      // recompute: the checkpointed segments
  int rerun_ops = 0;                      // recompute: ops whose forward runs again in backward
  int64_t recompute_flops = 0;
};

// What mixed precision did to the variant (configs/README.md "Mixed precision"), from its graph.
struct PrecisionFacts {
  std::string precision = "plain";
  std::string low_dtype;                // float16 or bfloat16
  std::vector<std::string> low_ops;     // ops computing with cast copies of their weights (conv, linear)
  std::vector<std::string> casts;       // the cast ops autocast's rules inserted
  int64_t saved_weight_copy_bytes = 0;  // the weight copies kept for backward
  // amp_float16 in training: GradScaler's loss scaling (runtime/loss_scaler.hpp); the bytes of the
  // scaled copy of the upstream gradient backward starts from, 0 without it.
  int64_t loss_scaled_gradient_bytes = 0;
  // The same variant with precision plain (float32), as the memory model and the counts predict
  // it: what AMP changed. Set for AMP variants only.
  struct Plain {
    int64_t saved_bytes = 0, peak_bytes = 0, bytes = 0;  // bytes: moved in the headline phase
  };
  std::optional<Plain> plain;
  std::optional<double> cast_ms;  // the cast ops' measured time (per-op times), when measured
};

struct VariantFacts {
  std::string block, variant, kind, point_label;
  bool is_baseline = false;
  bool training = true;
  std::string dtype, layout, device, trust;
  std::string compute_dtype;      // what its limits are for (results.hpp compute_dtype): bfloat16 under amp_bfloat16
  std::optional<double> time_ms;  // headline median: the step (train) or forward (infer)
  int64_t params = 0, macs = 0, flops = 0, bytes = 0;  // headline phase
  std::vector<OpFacts> ops;
  std::vector<StageFacts> stages;  // a network's rows only: its ops by stage
  MemoryFacts memory;
  LaunchFacts launches;
  PolicyFacts policy;
  PrecisionFacts precision;
};

// The time of one op kind in a variant against the baseline.
struct KindDelta {
  std::string kind;
  int ops = 0, base_ops = 0;
  double ms = 0, base_ms = 0;
  double delta_ms() const { return ms - base_ms; }
};

struct VariantExplanation {
  VariantFacts facts;
  std::vector<KindDelta> by_kind;      // against the baseline, largest |delta| first (empty for it)
  std::vector<std::string> main_ops;   // the fewest ops that make up 80% of the measured op time
  std::vector<std::string> sentences;  // generated by explain_rules
};

struct BlockExplanation {
  std::string block, point_label, baseline;
  std::vector<VariantExplanation> variants;  // the baseline first
};

struct Explanation {
  std::string device;
  std::optional<DeviceLimits> limits;  // with where they came from
  std::string limits_dtype;            // the dtype they hold for ("" : every row's)
  std::vector<BlockExplanation> blocks;
};

}  // namespace convbench

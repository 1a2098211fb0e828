// The rules that turn facts into an explanation: each op's bound against the device's limits,
// where the time difference to the baseline goes (by op kind), the ops that make up most of the
// time, and a few sentences, each a fixed template filled from the facts. Thresholds are named
// here so that a reader can check a sentence against the JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "explain/explanation.hpp"

namespace convbench {

// The ops that make up this share of the measured op time are a variant's main ops.
inline constexpr double kMainOpsShare = 0.8;
// Op kinds named in the time difference: the fewest that cover this share of it (at most 3).
inline constexpr double kMainKindsShare = 0.8;
// A step with at least this share of its time in no op is launch-bound: host work and launches
// between ops, not the ops' own work, set its time.
inline constexpr double kLaunchBoundShare = 0.25;
// Ratios within this of 1 are "the same" in sentences (the measurement noise is about 1-3%).
inline constexpr double kSameRatio = 0.05;

// Sets bound, floor_ms and of_floor from the limits: compute-bound when the op's intensity is at
// least the ridge point (peak / bandwidth), memory-bound below it. Limits of another device
// (DeviceLimits::other_device) give a bound and a floor there, and no of_floor.
void classify_op(OpFacts& op, const DeviceLimits& limits);

// Time per op kind of `v` against `base` (only ops with a measured time), largest |delta| first.
std::vector<KindDelta> time_by_kind(const VariantFacts& v, const VariantFacts& base);

// The fewest ops, slowest first, whose measured times make up kMainOpsShare of the op time.
std::vector<std::string> main_ops(const VariantFacts& v);

// The sentences for `v`; `base` is null for the baseline itself.
std::vector<std::string> explain_sentences(const VariantExplanation& v, const VariantExplanation* base,
                                           const std::optional<DeviceLimits>& limits);

// Groups rows by block and sweep point (the baseline first), classifies every op, compares each
// variant with its baseline and writes the sentences. The limits apply to rows of `limits_dtype`
// (all rows when empty): a float32 peak says nothing about a float16 row.
Explanation build_explanation(const std::vector<VariantFacts>& facts, const std::string& device,
                              const std::optional<DeviceLimits>& limits, const std::string& limits_dtype = "");

}  // namespace convbench

// Predicts, byte for byte, what the runtime's allocator will measure for one training step or one
// inference pass of a variant. It replays the executor's rules (lib/runtime/executor.hpp) on
// byte counts alone, independently of the executor's code, so that a test comparing the two
// catches a mistake in either:
//  - resident before the step: parameters, buffers, the block input and, in training, the
//    upstream gradient dy;
//  - forward: an op's output (and, in training, its aux tensors) is allocated before it runs,
//    then (conv_bn_stats) the aux of the batch norm whose statistics it fills, then its workspace; the workspace is
//    freed after it; an input is freed after its last forward consumer unless a recorded op saved it (see
//    autograd_rules.hpp); an op is recorded only when its output needs a gradient, as in PyTorch;
//  - backward, ops in reverse: computed input gradients and parameter gradients are allocated,
//    then the workspace; after the op its workspace, its saved tensors and its grad_output are
//    released; input gradients then accumulate where a value feeds several ops (in place into
//    an exclusively held gradient, else into a new tensor);
//  - the block output is held until the step ends; parameter gradients outlive the step.
// Mixed precision (graph.precision): cast ops run as any op; an op with Op::param_cast first
// allocates low-precision copies of its weights (autocast's cache keeps a parameter's copy to the
// end of the forward, the tape those backward reads), and in backward makes its parameter
// gradients in the low dtype, cast to float32 once its saved tensors are let go.
// Memory policies (graph.memory_policy) add their rules: an op that runs in place takes its
// input's buffer; a recompute segment saves nothing in forward, keeps its inputs, and runs its
// forward again in backward (analysis/recompute_plan.hpp says when and which ops).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "runtime/backend.hpp"
#include "runtime/memory_stats.hpp"

namespace convbench {

// One tensor held for backward at the end of forward: what it is, who made it and who keeps it.
// A tensor kept by several ops (a BN input that is also a conv output another op saved) is one
// entry: it is stored once.
struct SavedTensorFacts {
  std::string what;      // "output of reduce.conv", "block input", "mask of drop"
  std::string producer;  // the op that computed it; empty for the block input
  // The recorded ops that keep it, in forward order; "checkpoint of SEGMENT" for a recompute
  // segment's kept input.
  std::vector<std::string> saved_by;
  int64_t bytes = 0;
  bool counted = true;  // in the saved category; false for the block input (counted as an input)
};

struct MemoryPrediction {
  int64_t peak_bytes = 0;
  CategoryBytes at_peak{};           // breakdown of the peak
  CategoryBytes peak_by_category{};  // each category's own peak
  int64_t resident_bytes = 0;        // before the step: params, buffers, input (and dy)
  int64_t saved_bytes = 0;           // saved for backward at the end of forward (training)
  int64_t parameter_bytes = 0;
  int64_t gradient_bytes = 0;  // parameter gradients after the step
  // Every tensor saved for backward (training), in the order forward made them; the counted
  // ones sum to saved_bytes exactly.
  std::vector<SavedTensorFacts> saved;
  // When the peak was reached: the op that was running ("" before any op) and its phase
  // ("forward" | "backward" | "recompute", the forward run again in backward; "" before any op).
  std::string peak_op, peak_phase;
};

// Workspace bytes an op needs in a phase; nullptr means none (the analysis without a backend).
using WorkspaceQuery = std::function<int64_t(const Op&, Phase)>;
// The op whose aux tensors op `index`'s forward fills (Backend::fills_statistics_of), or -1;
// nullptr means none does (a backend that fuses no statistics, or the analysis without one).
using StatisticsQuery = std::function<int(int index)>;

MemoryPrediction predict_memory(const Graph& graph, bool training, const WorkspaceQuery& workspace = nullptr,
                                const StatisticsQuery& statistics = nullptr);

}  // namespace convbench

// Predicts, byte for byte, what the runtime's allocator will measure for one training step or one
// inference pass of a variant. It replays the executor's rules (lib/runtime/executor.hpp) on
// byte counts alone, independently of the executor's code, so that a test comparing the two
// catches a mistake in either:
//  - resident before the step: parameters, buffers, the block input and, in training, the
//    upstream gradient dy;
//  - forward: an op's output (and, in training, its aux tensors) is allocated before it runs,
//    then its workspace; the workspace is freed after it; an input is freed after its last
//    forward consumer unless a recorded op saved it (see autograd_rules.hpp); an op is recorded
//    only when its output needs a gradient, as in PyTorch;
//  - backward, ops in reverse: computed input gradients and parameter gradients are allocated,
//    then the workspace; after the op its workspace, its saved tensors and its grad_output are
//    released; input gradients then accumulate where a value feeds several ops (in place into
//    an exclusively held gradient, else into a new tensor);
//  - the block output is held until the step ends; parameter gradients outlive the step.
#pragma once

#include <cstdint>
#include <functional>

#include "graph/graph.hpp"
#include "runtime/backend.hpp"
#include "runtime/memory_stats.hpp"

namespace convbench {

struct MemoryPrediction {
  int64_t peak_bytes = 0;
  CategoryBytes at_peak{};           // breakdown of the peak
  CategoryBytes peak_by_category{};  // each category's own peak
  int64_t resident_bytes = 0;        // before the step: params, buffers, input (and dy)
  int64_t saved_bytes = 0;           // saved for backward at the end of forward (training)
  int64_t parameter_bytes = 0;
  int64_t gradient_bytes = 0;  // parameter gradients after the step
};

// Workspace bytes an op needs in a phase; nullptr means none (the analysis without a backend).
using WorkspaceQuery = std::function<int64_t(const Op&, Phase)>;

MemoryPrediction predict_memory(const Graph& graph, bool training, const WorkspaceQuery& workspace = nullptr);

}  // namespace convbench

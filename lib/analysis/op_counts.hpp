// Exact work and traffic counts per op and direction, in 64-bit integers.
//
// MACs (multiply-accumulates) of a convolution = N * Cout * (Cin/groups) * K * P, with K the
// kernel volume and P the output spatial size (transposed convolution: the input spatial size).
// Backward-data equals the forward MACs and is skipped when the conv's input needs no gradient;
// backward-weight equals the forward MACs, divided by groups like the forward (PyTorch's
// FlopCounterMode over-counts it by the group factor in releases without PR #183405).
//
// FLOPs = 2 * MACs plus elementwise work, per element of the op's output unless noted:
//   conv bias: forward 1 (add), backward_weight 1 (bias-gradient sum)
//   batch/group norm, training: forward 5 (mean 1, variance 2, normalise+affine 2);
//     inference: forward 2; backward_data 6, backward_weight 3
//   relu: forward 1, backward 1;  leaky_relu: forward 2, backward 2;  dropout: forward 1, backward 1
//   add, sub: forward 1; backward: add 0 (the gradient is passed on), sub 1 (negation)
//   concat: 0;  max_pool: forward K-1 comparisons per output;  avg_pool: forward K per output,
//   backward K per output;  upsample: forward 0, backward (scale^d - 1) adds per input element.
//
// Bytes are the minimum traffic of the op alone: every tensor it reads or writes, touched once.
//
// Memory policy recompute runs some ops' forward again in backward (analysis/recompute_plan.hpp):
// their forward MACs and FLOPs are counted again as `recompute`, and their forward bytes in the
// backward bytes.
#pragma once

#include <cstdint>

#include "graph/graph.hpp"

namespace convbench {

struct DirectionCounts {
  int64_t forward = 0;
  int64_t backward_data = 0;
  int64_t backward_weight = 0;
  // Forward work run a second time inside backward (memory policy recompute): the recomputed
  // ops' forward counts. It belongs to the backward pass, where it runs.
  int64_t recompute = 0;
  int64_t backward() const { return backward_data + backward_weight + recompute; }
  DirectionCounts& operator+=(const DirectionCounts& o);
};

struct OpCounts {
  int64_t params = 0;
  int64_t buffers = 0;
  int64_t buffer_counters = 0;  // OpDefinition::pytorch_counter_elements
  DirectionCounts macs;
  DirectionCounts flops;
  int64_t bytes_forward = 0;
  int64_t bytes_backward = 0;
  // Adds every count of `o` (checked: CountOverflow past 64 bits), as a variant sums its ops'.
  OpCounts& operator+=(const OpCounts& o);
};

// `input_requires_grad` is per op input; `training` selects the norm forward rule.
OpCounts count_op(const Graph& graph, const Op& op, const std::vector<bool>& input_requires_grad, bool training);

}  // namespace convbench

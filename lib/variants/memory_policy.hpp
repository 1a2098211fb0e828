// Applies a variant's memory policy (configs/README.md "Memory policies") to the graph the variant builder
// made, and records what it did in the graph (graph.memory_policy, graph.segments, Op::in_place)
// for the executor, the memory model, the counts, the graph hash and `explain` to read:
//  - recompute: one segment per block, or per network slot (each slot checkpointed on its own, as
//    users wrap each residual block in torch.utils.checkpoint);
//  - inplace_act: relu, sigmoid and leaky_relu (negative_slope >= 0: PyTorch's in-place leaky
//    ReLU refuses a negative slope, whose output does not tell the input's sign) run in place
//    where autograd allows (in_place_allowed below); the others keep their own output;
//  - inplace_abn: every batch_norm whose output only a leaky_relu reads becomes one
//    batch_norm_act op (the norm's name and parameters, the activation's slope and output) that
//    saves only its output and statistics, in place where autograd allows.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace convbench {

// Why a policy cannot apply to a graph (the builder locates it at the `memory_policy` key).
class PolicyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `slots`: a network's slots as op ranges (empty for a block, whose segment is all of its ops).
// Throws PolicyError when the policy cannot apply: recompute in inference (there is no backward
// to recompute for), inplace_abn without a batch_norm -> leaky_relu pair (or with a batch_norm ->
// relu pair: ReLU's output does not give back its input where it is 0), inplace_act without an
// activation.
void apply_memory_policy(Graph& graph, MemoryPolicy policy, bool training,
                         const std::vector<RecomputeSegment>& slots = {});

// Whether op `i` may write its output over its first input, as PyTorch autograd allows an
// in-place op: the input is not the block input (the caller's tensor), it has no other reader,
// and no op saves it (or a value sharing its storage) for backward: PyTorch would raise "one of
// the variables needed for gradient computation has been modified by an inplace operation".
// Rules of a training step; in inference they are only stricter than needed.
bool in_place_allowed(const Graph& graph, int i);

}  // namespace convbench

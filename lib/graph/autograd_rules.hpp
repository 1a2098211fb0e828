// What each op keeps for its backward pass and how gradients flow through it. These rules follow
// PyTorch autograd (conv saves its input; BN its input and per-channel statistics; ReLU its
// output; leaky ReLU its input; dropout a mask; add, sub and concat nothing), so that memory we
// measure compares with what PyTorch users see. The executor and the analysis memory model both
// read these tables; each applies them independently.
#pragma once

#include <vector>

#include "graph/graph.hpp"

namespace convbench {

// Which of the op's own tensors its backward needs (parameters are resident anyway).
struct SavedTensors {
  std::vector<int> inputs;  // positions in op.inputs that are saved
  bool output = false;      // the op's output is saved
};

SavedTensors saved_tensors(const Op& op);

// Extra tensors an op produces for its own backward, in training only: BN mean and inverse std
// (per channel), group-norm mean and rstd (per sample and group), the dropout mask (1 byte per
// element, as PyTorch's CUDA path), max-pool indices (int64 per output element, as PyTorch).
std::vector<TensorDesc> aux_tensors(const Graph& graph, const Op& op);

// How the gradient of the op's output reaches input `position`:
//  alias   - the same tensor is passed on, nothing is allocated (add; sub's first operand),
//  compute - a new tensor is allocated and filled by the backend.
enum class GradFlow { alias, compute };
GradFlow grad_flow(const Op& op, int position);

// In inference, dropout is the identity and returns its input itself (no allocation), as PyTorch's
// eval mode does. Every other op allocates its output.
bool output_aliases_input(const Op& op, bool training);

}  // namespace convbench

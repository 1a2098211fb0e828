// What each op keeps for its backward pass and how gradients flow through it, read from the op
// definitions (lib/ops/<op>.cpp). These rules follow PyTorch autograd (conv saves its input; BN
// its input and per-channel statistics; ReLU its output; leaky ReLU its input; dropout a mask;
// add, sub and concat nothing), so that memory we measure compares with what PyTorch users see.
// The executor and the analysis memory model both read them; each applies them independently
// (the executor by allocating, the model by counting), and the memory tests compare the two.
#pragma once

#include <vector>

#include "graph/graph.hpp"
#include "ops/op_definition.hpp"

namespace convbench {

// Which of the op's own tensors its backward needs (parameters are resident anyway), given which
// of its inputs need a gradient (one flag per op input).
SavedTensors saved_tensors(const Op& op, const std::vector<bool>& input_requires_grad);
// The op's inputs' flags out of the graph's per-value requires_grad().
std::vector<bool> inputs_requiring_grad(const Op& op, const std::vector<bool>& value_requires_grad);

// Extra tensors an op produces for its own backward, in training only: BN mean and inverse std
// (per channel), group-norm mean and rstd (per sample and group), the dropout mask (1 byte per
// element, as PyTorch's CUDA path), max-pool indices (int64 per output element, as PyTorch).
std::vector<TensorDesc> aux_tensors(const Graph& graph, const Op& op);
// "mean of bn1", "indices of pool": what aux tensor `index` of the op is (OpDefinition::aux_names).
std::string aux_tensor_name(const Op& op, size_t index);

// How the gradient of the op's output reaches input `position` (GradFlow: alias or compute).
GradFlow grad_flow(const Op& op, int position);

// In inference, dropout is the identity and returns its input itself (no allocation), as PyTorch's
// eval mode does. Every other op allocates its output.
bool output_aliases_input(const Op& op, bool training);

}  // namespace convbench

#pragma once
// What dropout and channel_dropout share (configs/README.md "Custom variants"): the field p (PyTorch's default 0.5),
// identity in inference, 1 FLOP per element each way, p in [0, 1). Each op's own file adds what
// it saves for backward.
#include "ops/op_definition.hpp"

namespace convbench {

OpDefinition dropout_family_definition(OpKind kind);

// The saved noise of a dropout that drops whole units (channel_dropout's (n, c), drop_path's n):
// one value per unit in the input's dtype, shaped as the input's first `unit_dims` dims with 1 in
// the others, as PyTorch's modules keep it for their multiply.
std::vector<TensorDesc> unit_noise(const Graph& graph, const Op& op, size_t unit_dims);

}  // namespace convbench

#pragma once
// What dropout and channel_dropout share (configs/README.md "Custom variants"): the field p (PyTorch's default 0.5),
// identity in inference, 1 FLOP per element each way, p in [0, 1). Each op's own file adds what
// it saves for backward.
#include "ops/op_definition.hpp"

namespace convbench {

OpDefinition dropout_family_definition(OpKind kind);

}  // namespace convbench

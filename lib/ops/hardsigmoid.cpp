// hardsigmoid, y = relu6(x + 3) / 6, as nn.Hardsigmoid (MobileNetV3's squeeze-excitation gate).
// Backward reads the input, as PyTorch's hardsigmoid_backward: g / 6 strictly inside (-3, 3), 0
// elsewhere. FLOPs per element: forward 4 (add, max, min, divide), backward 2 (the select, the
// product).
#include "ops/input_saving_activation.hpp"

namespace convbench {

OpDefinition define_hardsigmoid() { return input_saving_activation(OpKind::hardsigmoid, 4, 2); }

}  // namespace convbench

// silu (swish), y = x * sigmoid(x), as nn.SiLU: EfficientNet's and MobileNetV3-era blocks'
// activation. Backward reads the input: dx = g * s * (1 + x * (1 - s)), s = sigmoid(x).
// FLOPs per element: forward 5 (the sigmoid's 4, the product), backward 9 (the sigmoid again, then
// 1 - s, x * (1 - s), 1 + ..., s * ..., g * ...).
#include "ops/input_saving_activation.hpp"

namespace convbench {

OpDefinition define_silu() { return input_saving_activation(OpKind::silu, 5, 9); }

}  // namespace convbench

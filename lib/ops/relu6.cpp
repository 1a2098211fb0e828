// relu6, y = min(max(x, 0), 6), as nn.ReLU6 (MobileNetV2), which PyTorch computes as
// hardtanh(x, 0, 6): backward reads the input and passes g strictly inside (0, 6), as
// hardtanh_backward does. FLOPs per element: forward 2 (max, min), backward 1 (the select).
#include "ops/input_saving_activation.hpp"

namespace convbench {

OpDefinition define_relu6() { return input_saving_activation(OpKind::relu6, 2, 1); }

}  // namespace convbench

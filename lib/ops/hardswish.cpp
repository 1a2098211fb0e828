// hardswish, y = x * relu6(x + 3) / 6, as nn.Hardswish (MobileNetV3). Backward reads the input,
// as PyTorch's hardswish_backward: 0 below -3, g * (x / 3 + 0.5) up to 3, g above.
// FLOPs per element: forward 5 (add, max, min, multiply, divide), backward 4 (two compares,
// the slope's divide and add, the product with g, counted as 4 with the compares as one select).
#include "ops/input_saving_activation.hpp"
#include "ops/onnx_export_helpers.hpp"

namespace convbench {

OpDefinition define_hardswish() {
  OpDefinition d = input_saving_activation(OpKind::hardswish, 5, 4);
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::unary(w, op, "HardSwish"); };
  d.peer_module = "nn.Hardswish";
  d.onnx_import = OnnxImport{.node = "HardSwish", .fields = {}};
  return d;
}

}  // namespace convbench

// relu6, y = min(max(x, 0), 6), as nn.ReLU6 (MobileNetV2), which PyTorch computes as
// hardtanh(x, 0, 6): backward reads the input and passes g strictly inside (0, 6), as
// hardtanh_backward does. FLOPs per element: forward 2 (max, min), backward 1 (the select).
#include "ops/input_saving_activation.hpp"
#include "ops/onnx_export_helpers.hpp"

namespace convbench {

OpDefinition define_relu6() {
  OpDefinition d = input_saving_activation(OpKind::relu6, 2, 1);
  // nn.ReLU6 as PyTorch exports it: Clip with constant bounds.
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    using namespace onnx_export;
    w.node("Clip", op.name, {in(w, op), scalar(w, op, "min", 0.0), scalar(w, op, "max", 6.0)}, {out(w, op)});
  };
  d.peer_module = "nn.ReLU6";
  return d;
}

}  // namespace convbench

// silu (swish), y = x * sigmoid(x), as nn.SiLU: EfficientNet's and MobileNetV3-era blocks'
// activation. Backward reads the input: dx = g * s * (1 + x * (1 - s)), s = sigmoid(x).
// FLOPs per element: forward 5 (the sigmoid's 4, the product), backward 9 (the sigmoid again, then
// 1 - s, x * (1 - s), 1 + ..., s * ..., g * ...).
#include "ops/input_saving_activation.hpp"
#include "ops/onnx_export_helpers.hpp"

namespace convbench {

namespace {

// nn.SiLU as PyTorch exports it at opset 17: Sigmoid, then Mul by the input.
void silu_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const std::string gate = w.fresh(op.name + "/sigmoid");
  w.node("Sigmoid", w.fresh(op.name + "/Sigmoid"), {in(w, op)}, {gate});
  w.node("Mul", op.name, {in(w, op), gate}, {out(w, op)});
}

}  // namespace

OpDefinition define_silu() {
  OpDefinition d = input_saving_activation(OpKind::silu, 5, 9);
  d.onnx_export = silu_onnx;
  d.peer_module = "nn.SiLU";
  return d;
}

}  // namespace convbench

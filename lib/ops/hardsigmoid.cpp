// hardsigmoid, y = relu6(x + 3) / 6, as nn.Hardsigmoid (MobileNetV3's squeeze-excitation gate).
// Backward reads the input, as PyTorch's hardsigmoid_backward: g / 6 strictly inside (-3, 3), 0
// elsewhere. FLOPs per element: forward 4 (add, max, min, divide), backward 2 (the select, the
// product).
#include <cmath>
#include <string>

#include "ops/input_saving_activation.hpp"
#include "ops/onnx_export_helpers.hpp"

namespace convbench {

OpDefinition define_hardsigmoid() {
  OpDefinition d = input_saving_activation(OpKind::hardsigmoid, 4, 2);
  // ONNX's default alpha is 0.2; PyTorch's is 1/6 (written as a float).
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    w.node("HardSigmoid", op.name, {onnx_export::in(w, op)}, {onnx_export::out(w, op)}).number("alpha", 1.0 / 6.0);
  };
  d.peer_module = "nn.Hardsigmoid";
  // nn.Hardsigmoid's form only (alpha 1/6, written as a float, and beta 1/2): other slopes are no
  // convbench op.
  d.onnx_import =
      OnnxImport{.node = "HardSigmoid", .fields = [](const OnnxNodeAttributes& a) {
                   const double alpha = a.number("alpha", 0.2), beta = a.number("beta", 0.5);
                   if (std::abs(alpha - 1.0 / 6.0) > 1e-7 || beta != 0.5)
                     a.refuse("a HardSigmoid with alpha " + std::to_string(alpha) + " and beta " +
                              std::to_string(beta) + ": convbench's hardsigmoid is PyTorch's, alpha 1/6 and beta 1/2");
                   return OpFieldValues{};
                 }};
  return d;
}

}  // namespace convbench

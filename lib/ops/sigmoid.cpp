// sigmoid, y = 1 / (1 + exp(-x)): backward reads the output, as PyTorch saves the result
// (dx = g * y * (1 - y)). FLOPs per element: forward 4 (negate, exp, add, divide), backward 3.
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_sigmoid() {
  OpDefinition d;
  d.kind = OpKind::sigmoid;
  d.saved = {{}, true, {}};
  d.work = [](const WorkQuery& q) {
    const int64_t n = q.output_elements();
    OpWork w;
    w.elementwise = {checked_mul(n, 4), q.any_input_grad() ? checked_mul(n, 3) : 0, 0};
    return w;
  };
  d.infer = infer_same_shape;
  // In place it still saves its output, all its backward reads.
  // autocast: activations run in their input's dtype.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{
      .activation = true, .in_place_safe = [](const Op&) { return true; }, .conv_epilogue = ConvEpilogueAct::sigmoid};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::unary(w, op, "Sigmoid"); };
  d.peer_module = "nn.Sigmoid";
  d.onnx_import = OnnxImport{.node = "Sigmoid", .fields = {}};
  return d;
}

}  // namespace convbench

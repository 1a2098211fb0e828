// relu: backward reads the output (PyTorch saves the result); 1 FLOP per element each way.
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_relu() {
  OpDefinition d;
  d.kind = OpKind::relu;
  d.saved = {{}, true, {}};
  d.work = [](const WorkQuery& q) {
    OpWork w;
    w.elementwise = {q.output_elements(), q.any_input_grad() ? q.output_elements() : 0, 0};
    return w;
  };
  d.infer = infer_same_shape;
  // In place it still saves its output, which says where the input was positive.
  // autocast: activations run in their input's dtype.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{
      .activation = true, .in_place_safe = [](const Op&) { return true; }, .conv_epilogue = ConvEpilogueAct::relu};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::unary(w, op, "Relu"); };
  d.peer_module = "nn.ReLU";
  d.onnx_import = OnnxImport{.node = "Relu", .fields = {}};
  return d;
}

}  // namespace convbench

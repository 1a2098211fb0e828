// leaky_relu: backward reads the input (the output when it runs in place); 2 FLOPs per element each way (compare,
// scale).
#include <cmath>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_leaky_relu() {
  OpDefinition d;
  d.kind = OpKind::leaky_relu;
  d.fields = {{"negative_slope", FieldKind::number}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.negative_slope = f.get<double>("negative_slope").value_or(0.01);  // PyTorch's default
  };
  d.saved = {{0}, false, {}};
  // In place (memory policy inplace_act, negative_slope >= 0), the input is gone: backward reads
  // the output, whose sign is the input's (PyTorch's leaky_relu_backward with self_is_result).
  d.saved_in_place = SavedTensors{{}, true, {}};
  d.work = [](const WorkQuery& q) {
    const int64_t n = checked_mul(q.output_elements(), 2);
    OpWork w;
    w.elementwise = {n, q.any_input_grad() ? n : 0, 0};
    return w;
  };
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"negative_slope", op.negative_slope}}; };
  d.infer = infer_same_shape;
  // In place it saves its output, whose sign is the input's only for a slope >= 0.
  // autocast: activations run in their input's dtype.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{.activation = true,
                      .in_place_safe = [](const Op& op) { return op.negative_slope >= 0; },
                      .conv_epilogue = ConvEpilogueAct::leaky_relu};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    w.node("LeakyRelu", op.name, {onnx_export::in(w, op)}, {onnx_export::out(w, op)})
        .number("alpha", op.negative_slope);
  };
  d.peer_module = "nn.LeakyReLU";
  d.onnx_import = OnnxImport{.node = "LeakyRelu", .fields = [](const OnnxNodeAttributes& a) {
                               OpFieldValues f;
                               const double alpha = a.number("alpha", 0.01);
                               if (!std::isfinite(alpha)) a.refuse("alpha is not a finite number");
                               f.set("negative_slope", alpha);
                               return f;
                             }};
  return d;
}

}  // namespace convbench

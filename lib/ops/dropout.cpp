// dropout: forward saves a mask of one byte per element (as PyTorch's CUDA path) for backward;
// in inference it is the identity and returns its input itself; 1 FLOP per element each way.
#include "ops/dropout_family.hpp"
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition dropout_family_definition(OpKind kind) {
  OpDefinition d;
  d.kind = kind;
  d.fields = {{"p", FieldKind::probability}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.dropout_p = f.get<double>("p").value_or(0.5);  // PyTorch's default
  };
  d.identity_in_inference = true;
  d.work = [](const WorkQuery& q) {
    OpWork w;
    w.elementwise = {q.output_elements(), q.any_input_grad() ? q.output_elements() : 0, 0};
    return w;
  };
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"p", op.dropout_p}}; };
  d.infer = [](const Graph& graph, Op& op) {
    require_at(op.dropout_p >= 0.0 && op.dropout_p < 1.0, op.name, {"p"}, "dropout probability must be in [0, 1)");
    return OpShape{graph.desc(op.inputs.at(0)), {}, {}};
  };
  // autocast: both dropouts run in their input's dtype (their noise too).
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  // Inference: the identity either way. ONNX has no channel-wise dropout; a Dropout node keeps
  // the ratio visible (and is what the importer reads back as convbench's dropout). drop_path
  // writes its own.
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) {
    using namespace onnx_export;
    w.node("Dropout", op.name, {in(w, op), w.floats(op.name + ".ratio", {}, {static_cast<float>(op.dropout_p)})},
           {out(w, op)});
  };
  return d;
}

std::vector<TensorDesc> unit_noise(const Graph& graph, const Op& op, size_t unit_dims) {
  TensorDesc noise = graph.desc(op.inputs.at(0));
  for (size_t i = unit_dims; i < noise.shape.size(); ++i) noise.shape[i] = 1;
  return {noise};
}

OpDefinition define_dropout() {
  OpDefinition d = dropout_family_definition(OpKind::dropout);
  d.aux = [](const Graph& graph, const Op& op) {
    TensorDesc mask = graph.desc(op.inputs.at(0));
    mask.dtype = DType::uint8;
    return std::vector<TensorDesc>{mask};
  };
  d.aux_names = {"mask"};
  d.peer_module = "nn.Dropout";
  return d;
}

}  // namespace convbench

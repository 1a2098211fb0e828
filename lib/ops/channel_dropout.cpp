// channel_dropout (PyTorch's nn.Dropout2d / nn.Dropout3d): drops whole (n, c) channels, keeping
// channel n*C + c when dropout_keep(n*C + c, seed, p) (dropout's Philox rule indexed by channel
// instead of element) and scaling kept ones by 1/(1-p). Forward saves what PyTorch's
// feature_dropout saves: the noise, one value per (n, c) of shape (N, C, 1, ..., 1) in the input's
// dtype (0 or 1/(1-p)), which its multiply keeps for backward. In inference it is the identity and
// returns its input itself; 1 FLOP per element each way, as dropout.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_channel_dropout() {
  OpDefinition d;
  d.kind = OpKind::channel_dropout;
  d.fields = {{"p", FieldKind::probability}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.dropout_p = f.get<double>("p").value_or(0.5);  // PyTorch's default
  };
  d.aux = [](const Graph& graph, const Op& op) {
    TensorDesc noise = graph.desc(op.inputs.at(0));
    for (size_t i = 2; i < noise.shape.size(); ++i) noise.shape[i] = 1;
    return std::vector<TensorDesc>{noise};
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
  return d;
}

}  // namespace convbench

// cast: its input converted to another dtype (Op::cast_to), where torch.autocast casts an
// activation: before an op that runs in another dtype than its input's, and to promote mixed
// operands (variants/autocast_graph.cpp inserts it; a spec cannot name it). Like PyTorch's
// _to_copy, backward keeps nothing (ToCopyBackward casts the gradient back to the input's dtype)
// and no FLOPs are counted: a cast moves bytes.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_cast() {
  OpDefinition d;
  d.kind = OpKind::cast;
  d.spec_op = false;
  d.saved = {{}, false, {}};
  d.work = [](const WorkQuery&) { return OpWork{}; };
  d.infer = [](const Graph& graph, Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    require(in.dtype != op.cast_to, op.name,
            "casts to " + std::string(to_string(op.cast_to)) + ", the dtype its input already has");
    OpShape s{in, {}, {}};
    s.output.dtype = op.cast_to;
    return s;
  };
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"to", std::string(to_string(op.cast_to))}}; };
  // A cast is what autocast inserts; it never meets autocast's rules itself.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  // Mixed precision is how a step runs (torch.autocast), not a model's own: the model is the
  // float32 graph, which the same variant with `precision: plain` builds.
  d.onnx_refusal = "a cast that mixed precision inserts: export the variant with precision: plain";
  return d;
}

}  // namespace convbench

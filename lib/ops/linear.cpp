// linear (PyTorch's nn.Linear on the flattened channels): input (N, in, 1, ..., 1), output
// (N, out_features, 1, ..., 1); weight (out_features, in) and bias (out_features), both
// initialised as nn.Linear does (uniform in +-1/sqrt(in)). Backward reads the input (the weight is
// a parameter). MACs N x in x out forward, the same for backward-data (when the input needs a
// gradient) and backward-weight; the bias adds one FLOP per output element forward and one per
// output element to its gradient, as a conv's.
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

// Flatten + Gemm is nn.Linear's export; the Reshape keeps convbench's (N, out, 1, ...) shape for
// the ops after it. When the linear is the graph's output, onnx_export.cpp declares the output
// (N, out) instead and the Reshape is left out: a classifier's logits, as PyTorch's export has them.
void linear_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const std::string flat = w.fresh(op.name + "/flat");
  w.node("Flatten", w.fresh(op.name + "/Flatten"), {in(w, op)}, {flat});
  std::vector<std::string> inputs = {flat};
  for (const int id : op.params) inputs.push_back(param_tensor(w, id));
  const bool last = op.output == w.graph.output;
  const std::string gemm = last ? out(w, op) : w.fresh(op.name + "/gemm");
  w.node("Gemm", op.name, inputs, {gemm}).integer("transB", 1);
  if (!last)
    w.node("Reshape", w.fresh(op.name + "/Reshape"), {gemm, w.int64s(op.name + ".shape", out_desc(w, op).shape)},
           {out(w, op)});
}

}  // namespace

OpDefinition define_linear() {
  OpDefinition d;
  d.kind = OpKind::linear;
  d.fields = {{"out_features", FieldKind::positive_int}, {"bias", FieldKind::boolean}};
  // out_features is required (0: not given, refused by infer at the op); bias defaults to the block's.
  d.apply_fields = [](const OpFieldValues& f, const FieldContext& c, Op& op) {
    op.linear.out_features = f.get<int64_t>("out_features").value_or(0);
    op.linear.bias = f.get<bool>("bias").value_or(c.block_bias);
  };
  d.saved = {{0}, false, {}};
  // Its input always (for the weight's gradient); its (cast) weight only when the input needs a
  // gradient, as PyTorch's addmm saves mat2 for mat1's gradient alone (checked under autocast).
  d.saved_for = [](const std::vector<bool>& input_requires_grad) {
    SavedTensors s{{0}, false, {}};
    if (input_requires_grad.at(0)) s.weights = {0};
    return s;
  };
  d.work = [](const WorkQuery& q) {
    const TensorDesc& in = q.graph.desc(q.op.inputs.at(0));
    const int64_t macs = checked_mul(checked_mul(in.batch(), in.channels()), q.op.linear.out_features);
    OpWork w;
    w.macs = {macs, q.input_requires_grad.at(0) ? macs : 0, macs};
    if (q.op.linear.bias) w.elementwise = {q.output_elements(), 0, q.output_elements()};
    return w;
  };
  d.attributes = [](const Op& op) {
    return nlohmann::ordered_json{{"out_features", op.linear.out_features}, {"bias", op.linear.bias}};
  };
  d.infer = [](const Graph& graph, Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    require_at(op.linear.out_features >= 1, op.name, {"out_features"},
               "linear needs out_features (the number of outputs), a positive integer");
    require_at(op.linear.out_features <= kMaxDimSize, op.name, {"out_features"}, "out_features is larger than 2^31");
    require_at(in.spatial_size() == 1, op.name, {"inputs", 0},
               "linear needs an input of spatial size 1, got " + channels_and_spatial(in) +
                   " (channels x spatial); put a global_avg_pool before it");
    OpShape s{in, {}, {}};
    s.output.shape[1] = op.linear.out_features;
    s.params.push_back({"weight", {op.linear.out_features, in.channels()}, in.channels()});
    if (op.linear.bias) s.params.push_back({"bias", {op.linear.out_features}, in.channels()});
    return s;
  };
  // autocast: on both devices' lower-precision lists; input and weight cast down, the weight's
  // copy cached for the step.
  d.autocast = autocast_always(AutocastClass::lower);
  d.traits = OpTraits{};
  d.onnx_export = linear_onnx;
  d.peer_module = "FlatLinear";
  return d;
}

}  // namespace convbench

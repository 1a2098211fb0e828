// batch_norm: weight and bias parameters, running mean and variance buffers (builder); backward
// reads the input and the per-channel mean and inverse std forward saves. eps and momentum are
// PyTorch's (defaults 1e-5 and 0.1; torchvision's MobileNetV3 and EfficientNet use 1e-3 and 0.01
// or 0.1). They appear among the op's attributes only when they differ from the defaults, so that
// a default batch norm's graph hash (the key of every history series) stays what it was.
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_batch_norm() {
  OpDefinition d;
  d.kind = OpKind::batch_norm;
  d.fields = {{"eps", FieldKind::number}, {"momentum", FieldKind::number}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.norm.eps = f.get<double>("eps").value_or(NormAttrs{}.eps);
    op.norm.momentum = f.get<double>("momentum").value_or(NormAttrs{}.momentum);
  };
  d.attributes = [](const Op& op) {
    nlohmann::ordered_json a = nlohmann::ordered_json::object();
    if (op.norm.eps != NormAttrs{}.eps) a["eps"] = op.norm.eps;
    if (op.norm.momentum != NormAttrs{}.momentum) a["momentum"] = op.norm.momentum;
    return a;
  };
  d.saved = {{0}, false, {}};
  d.aux = [](const Graph& graph, const Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    const TensorDesc stats{{in.channels()}, stats_dtype(in.dtype), Layout::channels_first};
    return std::vector<TensorDesc>{stats, stats};
  };
  d.aux_names = {"mean", "inverse std"};
  d.work = normalization_work;
  d.pytorch_counter_elements = 1;  // BatchNorm's num_batches_tracked
  d.infer = [](const Graph& graph, Op& op) {
    require_norm_constants(op, true);
    const int64_t c = graph.desc(op.inputs.at(0)).channels();
    OpShape s{graph.desc(op.inputs.at(0)), {}, {}};
    s.params = {{"weight", {c}, 1, ParamInit::ones}, {"bias", {c}, 1, ParamInit::zeros}};
    s.buffers = {{"running_mean", {c}, 1, ParamInit::zeros}, {"running_var", {c}, 1, ParamInit::ones}};
    return s;
  };
  // autocast: not on either device's list: runs in its input's dtype with float32 weight, bias
  // and statistics (verified on CPU; on CUDA cuDNN's batch norm takes half inputs so).
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::batch_norm_node(w, op, onnx_export::out(w, op)); };
  d.peer_module = "nn.BatchNorm2d";
  return d;
}

}  // namespace convbench

// layer_norm over the channels at each position: ConvNeXt's LayerNorm2d (torchvision permutes to
// channels-last, runs F.layer_norm over C, permutes back) and nn.LayerNorm(C) on a channels-last
// tensor, which compute the same thing. mean and rstd = 1/sqrt(var + eps) per (sample, position)
// over C (biased variance); y = (x - mean) * rstd * weight + bias, weight and bias per channel.
// Backward reads the input and both statistics, which is what PyTorch's native_layer_norm saves
// (its input, and mean and rstd of shape (N, *spatial, 1) in float32; weight and bias are
// parameters).
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

// layer_norm as torchvision's LayerNorm2d exports it: Transpose to channels-last, LayerNormalization
// over the last axis (opset 17) with the weight and bias, Transpose back.
void layer_norm_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const int rank = in_desc(w, op).rank();
  std::vector<int64_t> to_last = {0}, back = {0, rank - 1};
  for (int64_t a = 2; a < rank; ++a) to_last.push_back(a);
  to_last.push_back(1);
  for (int64_t a = 1; a < rank - 1; ++a) back.push_back(a);
  const std::string last = w.fresh(op.name + "/channels_last"), normed = w.fresh(op.name + "/normalized");
  w.node("Transpose", w.fresh(op.name + "/Transpose"), {in(w, op)}, {last}).ints("perm", to_last);
  const Param& weight = w.graph.params.at(static_cast<size_t>(op.params.at(0)));
  const Param& bias = w.graph.params.at(static_cast<size_t>(op.params.at(1)));
  const int64_t c = weight.desc.numel();
  w.node("LayerNormalization", w.fresh(op.name + "/LayerNormalization"),
         {last, w.weights(weight.name, {c}, w.param(op.params.at(0))),
          w.weights(bias.name, {c}, w.param(op.params.at(1)))},
         {normed})
      .integer("axis", -1)
      .number("epsilon", op.norm.eps);
  w.node("Transpose", op.name, {normed}, {out(w, op)}).ints("perm", back);
}

}  // namespace

OpDefinition define_layer_norm() {
  OpDefinition d;
  d.kind = OpKind::layer_norm;
  d.fields = {{"eps", FieldKind::number}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.norm.eps = f.get<double>("eps").value_or(NormAttrs{}.eps);
  };
  d.saved = {{0}, false, {}};
  d.aux = [](const Graph& graph, const Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    const TensorDesc stats{{in.batch() * in.spatial_size()}, stats_dtype(in.dtype), Layout::channels_first};
    return std::vector<TensorDesc>{stats, stats};
  };
  d.aux_names = {"mean", "inverse std"};  // per sample and position
  d.work = normalization_work;
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"eps", op.norm.eps}}; };
  d.infer = [](const Graph& graph, Op& op) {
    require_norm_constants(op, false);
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    const int64_t c = in.channels();
    OpShape s{in, {}, {}};
    s.params = {{"weight", {c}, 1, ParamInit::ones}, {"bias", {c}, 1, ParamInit::zeros}};
    return s;
  };
  // autocast: on CUDA's fp32 list (as group_norm); CPU autocast has no rule for it, so it runs in
  // its input's dtype (PyTorch 2.15: a bfloat16 input gives a bfloat16 output on the CPU).
  d.autocast = [](const AutocastQuery& q) {
    return q.device == AutocastDevice::cuda ? AutocastClass::float32 : AutocastClass::follows;
  };
  d.traits = OpTraits{};
  d.onnx_export = layer_norm_onnx;
  d.peer_module = "ChannelLayerNorm";
  return d;
}

}  // namespace convbench

// layer_norm over the channels at each position: ConvNeXt's LayerNorm2d (torchvision permutes to
// channels-last, runs F.layer_norm over C, permutes back) and nn.LayerNorm(C) on a channels-last
// tensor, which compute the same thing. mean and rstd = 1/sqrt(var + eps) per (sample, position)
// over C (biased variance); y = (x - mean) * rstd * weight + bias, weight and bias per channel.
// Backward reads the input and both statistics, which is what PyTorch's native_layer_norm saves
// (its input, and mean and rstd of shape (N, *spatial, 1) in float32; weight and bias are
// parameters).
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

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
  return d;
}

}  // namespace convbench

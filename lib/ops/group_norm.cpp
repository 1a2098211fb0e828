// group_norm: weight and bias parameters (builder); backward reads the input and the mean and
// rstd per sample and group that forward saves.
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

// PyTorch's exporter's group norm: the groups as instances, then the per-channel affine.
void group_norm_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const TensorDesc& x = in_desc(w, op);
  const int64_t groups = op.norm.groups, c = x.channels();
  const std::string grouped = w.fresh(op.name + "/grouped"), normed = w.fresh(op.name + "/normalized"),
                    back = w.fresh(op.name + "/ungrouped"), scaled = w.fresh(op.name + "/scaled");
  // As PyTorch's exporter writes it (and convbench's importer reads it back as one group_norm):
  // to (N, G, -1) with 0 copying the batch, and back to the input's own Shape.
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".grouped_shape", {0, groups, -1})},
         {grouped});
  w.node("InstanceNormalization", w.fresh(op.name + "/InstanceNormalization"),
         {grouped,
          w.weights(w.fresh(op.name + ".group_scale"), {groups}, std::vector<double>(static_cast<size_t>(groups), 1)),
          w.weights(w.fresh(op.name + ".group_bias"), {groups}, std::vector<double>(static_cast<size_t>(groups), 0))},
         {normed})
      .number("epsilon", op.norm.eps);
  const std::string shape = w.fresh(op.name + "/shape");
  w.node("Shape", w.fresh(op.name + "/Shape"), {in(w, op)}, {shape});
  w.node("Reshape", w.fresh(op.name + "/Reshape_1"), {normed, shape}, {back});
  std::vector<int64_t> affine(static_cast<size_t>(x.rank() - 1), 1);
  affine[0] = c;  // (C, 1, ...): broadcast over the spatial dims
  const Param& weight = w.graph.params.at(static_cast<size_t>(op.params.at(0)));
  const Param& bias = w.graph.params.at(static_cast<size_t>(op.params.at(1)));
  w.node("Mul", w.fresh(op.name + "/Mul"), {back, w.weights(weight.name, affine, w.param(op.params.at(0)))}, {scaled});
  w.node("Add", op.name, {scaled, w.weights(bias.name, affine, w.param(op.params.at(1)))}, {out(w, op)});
}

}  // namespace

OpDefinition define_group_norm() {
  OpDefinition d;
  d.kind = OpKind::group_norm;
  d.fields = {{"norm_groups", FieldKind::positive_int}, {"eps", FieldKind::number}};
  // A custom group_norm's groups default to 16 (not the block's norm_groups: configs/README.md).
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.norm.groups = f.get<int64_t>("norm_groups").value_or(16);
    op.norm.eps = f.get<double>("eps").value_or(NormAttrs{}.eps);
  };
  d.saved = {{0}, false, {}};
  d.aux = [](const Graph& graph, const Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    const TensorDesc stats{{in.batch() * op.norm.groups}, stats_dtype(in.dtype), Layout::channels_first};
    return std::vector<TensorDesc>{stats, stats};
  };
  d.aux_names = {"mean", "inverse std"};  // per sample and group
  d.work = normalization_work;
  // eps only when not PyTorch's default, so that a default group norm keeps its graph hash.
  d.attributes = [](const Op& op) {
    nlohmann::ordered_json a{{"norm_groups", op.norm.groups}};
    if (op.norm.eps != NormAttrs{}.eps) a["eps"] = op.norm.eps;
    return a;
  };
  d.infer = [](const Graph& graph, Op& op) {
    const int64_t c = graph.desc(op.inputs.at(0)).channels();
    const int64_t groups = op.norm.groups;
    require_norm_constants(op, false);
    require(groups >= 1, op.name, "norm_groups must be >= 1");
    require_at(
        c % groups == 0, op.name, {"norm_groups"},
        "the input's " + std::to_string(c) + " channels are not divisible by norm_groups " + std::to_string(groups));
    OpShape s{graph.desc(op.inputs.at(0)), {}, {}};
    s.params = {{"weight", {c}, 1, ParamInit::ones}, {"bias", {c}, 1, ParamInit::zeros}};
    return s;
  };
  // autocast: on CUDA's fp32 list (a half input is cast up, the output is float32); CPU autocast
  // has none for it: it runs in its input's dtype with float32 parameters and statistics.
  d.autocast = [](const AutocastQuery& q) {
    return q.device == AutocastDevice::cuda ? AutocastClass::float32 : AutocastClass::follows;
  };
  d.traits = OpTraits{};
  d.onnx_export = group_norm_onnx;
  d.peer_module = "nn.GroupNorm";
  return d;
}

}  // namespace convbench

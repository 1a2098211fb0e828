// group_norm: weight and bias parameters (builder); backward reads the input and the mean and
// rstd per sample and group that forward saves.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

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
  return d;
}

}  // namespace convbench

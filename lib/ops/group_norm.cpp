// group_norm: weight and bias parameters (builder); backward reads the input and the mean and
// rstd per sample and group that forward saves.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_group_norm() {
  OpDefinition d;
  d.kind = OpKind::group_norm;
  d.spec_fields = {"norm_groups"};
  d.saved = {{0}, false};
  d.aux = [](const Graph& graph, const Op& op) {
    const TensorDesc& in = graph.desc(op.inputs.at(0));
    const TensorDesc stats{{in.batch() * op.norm.groups}, stats_dtype(in.dtype), Layout::channels_first};
    return std::vector<TensorDesc>{stats, stats};  // mean, rstd
  };
  d.work = normalization_work;
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"norm_groups", op.norm.groups}}; };
  return d;
}

}  // namespace convbench

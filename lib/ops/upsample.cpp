// upsample (nearest neighbour, integer scale): nothing saved; no forward FLOPs, backward sums
// scale^d gradients into each input element (scale^d - 1 adds).
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_upsample() {
  OpDefinition d;
  d.kind = OpKind::upsample;
  d.spec_fields = {"scale"};
  d.work = [](const WorkQuery& q) {
    OpWork w;
    if (q.any_input_grad())
      w.elementwise.backward_data = q.output_elements() - count_elements(q.graph.desc(q.op.inputs.at(0)));
    return w;
  };
  d.attributes = [](const Op& op) { return nlohmann::ordered_json{{"scale", op.upsample_scale}}; };
  d.infer = [](const Graph& graph, Op& op) {
    require(op.upsample_scale >= 1, op.name, "scale must be >= 1");
    OpShape s{graph.desc(op.inputs.at(0)), {}, {}};
    for (int i = 2; i < s.output.rank(); ++i) s.output.shape[static_cast<size_t>(i)] *= op.upsample_scale;
    return s;
  };
  return d;
}

}  // namespace convbench

// upsample (nearest neighbour, integer scale): nothing saved; no forward FLOPs, backward sums
// scale^d gradients into each input element (scale^d - 1 adds).
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_upsample() {
  OpDefinition d;
  d.kind = OpKind::upsample;
  d.fields = {{"scale", FieldKind::positive_int}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.upsample_scale = f.get<int64_t>("scale").value_or(2);
  };
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
    for (int i = 2; i < s.output.rank(); ++i) {
      int64_t& size = s.output.shape[static_cast<size_t>(i)];
      const bool overflow = __builtin_mul_overflow(size, op.upsample_scale, &size);
      require_at(!overflow && size <= kMaxDimSize, op.name, {"scale"},
                 "the upsampled size " + (overflow ? std::string("beyond int64") : std::to_string(size)) +
                     " is larger than 2^31");
    }
    return s;
  };
  return d;
}

}  // namespace convbench

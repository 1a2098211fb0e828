// concat (along channels): two or more inputs; copies only, no FLOPs, nothing saved.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_concat() {
  OpDefinition d;
  d.kind = OpKind::concat;
  d.min_inputs = 2;
  d.max_inputs = -1;
  d.work = [](const WorkQuery&) { return OpWork{}; };
  d.infer = [](const Graph& graph, Op& op) {
    require(op.inputs.size() >= 2, op.name, "concat needs at least two inputs");
    const TensorDesc& first = graph.desc(op.inputs[0]);
    OpShape s{first, {}, {}};
    s.output.shape[1] = 0;
    for (int v : op.inputs) {
      const TensorDesc& d = graph.desc(v);
      bool same = d.rank() == first.rank() && d.shape[0] == first.shape[0];
      for (int i = 2; same && i < d.rank(); ++i)
        same = d.shape[static_cast<size_t>(i)] == first.shape[static_cast<size_t>(i)];
      require(same, op.name,
              "inputs must agree in every dim but channels: " + first.shape_string() + " vs " + d.shape_string());
      s.output.shape[1] += d.channels();
    }
    return s;
  };
  return d;
}

}  // namespace convbench

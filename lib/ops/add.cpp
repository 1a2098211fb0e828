// add: two inputs of one shape; both gradients are the output's, passed on (no allocation, no
// work); 1 FLOP per element forward.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_add() {
  OpDefinition d;
  d.kind = OpKind::add;
  d.min_inputs = d.max_inputs = 2;
  d.grad_flow = [](int) { return GradFlow::alias; };
  d.work = [](const WorkQuery& q) {
    OpWork w;
    w.elementwise = {q.output_elements(), 0, 0};
    return w;
  };
  d.infer = [](const Graph& graph, Op& op) {
    const TensorDesc& a = graph.desc(op.inputs.at(0));
    const TensorDesc& b = graph.desc(op.inputs.at(1));
    require(a.shape == b.shape, op.name, "operands differ in shape: " + a.shape_string() + " vs " + b.shape_string());
    return OpShape{a, {}, {}};
  };
  return d;
}

}  // namespace convbench

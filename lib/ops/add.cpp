// add: two inputs of one shape; both gradients are the output's, passed on (no allocation, no
// work); 1 FLOP per element forward.
#include "ops/onnx_export_helpers.hpp"
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
  d.infer = infer_same_shape_operands;
  // autocast: runs in its operands' dtype; mixed operands are promoted to the wider one.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::binary(w, op, "Add"); };
  d.peer_module = "Add";
  return d;
}

}  // namespace convbench

// sub: two inputs of one shape; the first's gradient is the output's, passed on, the second's
// its negation (1 FLOP per element, when it needs one); 1 FLOP per element forward.
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_sub() {
  OpDefinition d;
  d.kind = OpKind::sub;
  d.min_inputs = d.max_inputs = 2;
  d.grad_flow = [](int position) { return position == 0 ? GradFlow::alias : GradFlow::compute; };
  d.work = [](const WorkQuery& q) {
    OpWork w;
    w.elementwise = {q.output_elements(), q.input_requires_grad.at(1) ? q.output_elements() : 0, 0};
    return w;
  };
  d.infer = infer_same_shape_operands;
  // autocast: runs in its operands' dtype; mixed operands are promoted to the wider one.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::binary(w, op, "Sub"); };
  d.peer_module = "Sub";
  return d;
}

}  // namespace convbench

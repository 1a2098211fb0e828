// mul: a * b, b either a's shape or (N, C, 1, ..., 1) broadcast over space (squeeze-and-excitation's
// x * s). Backward keeps each operand only for the other's gradient, as PyTorch's mul: grad_a =
// g * b needs b, grad_b = g * a needs a. FLOPs: 1 per output element forward; backward 1 per
// output element for each gradient computed, plus, for a broadcast b, the adds that reduce g * a
// over space (output elements - b's elements).
#include <algorithm>
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

// b broadcast over a's space: the same batch and channels, every spatial size 1.
bool broadcasts_over_space(const TensorDesc& a, const TensorDesc& b) {
  return a.rank() == b.rank() && a.shape[0] == b.shape[0] && a.shape[1] == b.shape[1] &&
         std::all_of(b.shape.begin() + 2, b.shape.end(), [](int64_t s) { return s == 1; });
}

OpShape infer_mul(const Graph& graph, Op& op) {
  const TensorDesc& a = graph.desc(op.inputs.at(0));
  const TensorDesc& b = graph.desc(op.inputs.at(1));
  const std::string a_name = graph.values[static_cast<size_t>(op.inputs[0])].name;
  const std::string b_name = graph.values[static_cast<size_t>(op.inputs[1])].name;
  TensorDesc per_channel = a;
  std::fill(per_channel.shape.begin() + 2, per_channel.shape.end(), 1);
  require_at(a.shape == b.shape || broadcasts_over_space(a, b), op.name, {"inputs", 1},
             "\"" + b_name + "\" is " + channels_and_spatial(b) + " but \"" + a_name + "\" is " +
                 channels_and_spatial(a) +
                 " (channels x spatial); mul needs the second operand of the first's shape or " +
                 channels_and_spatial(per_channel) + " (one value per channel, broadcast over space)");
  require_at(a.layout == b.layout, op.name, {"inputs", 1},
             "\"" + b_name + "\" is " + std::string(to_string(b.layout)) + " but \"" + a_name + "\" is " +
                 std::string(to_string(a.layout)) +
                 "; mul needs one memory layout (convert one operand with convert_layout)");
  return OpShape{a, {}, {}};
}

}  // namespace

OpDefinition define_mul() {
  OpDefinition d;
  d.kind = OpKind::mul;
  d.min_inputs = d.max_inputs = 2;
  d.saved_for = [](const std::vector<bool>& rg) {
    SavedTensors s;
    if (rg.at(1)) s.inputs.push_back(0);  // grad_b = g * a
    if (rg.at(0)) s.inputs.push_back(1);  // grad_a = g * b
    std::sort(s.inputs.begin(), s.inputs.end());
    return s;
  };
  d.saved = {{0, 1}, false, {}};  // both operands need a gradient (saved_for says which otherwise)
  d.work = [](const WorkQuery& q) {
    const int64_t n = q.output_elements();
    const int64_t b_elements = count_elements(q.graph.desc(q.op.inputs.at(1)));
    OpWork w;
    w.elementwise.forward = n;
    if (q.input_requires_grad.at(0)) w.elementwise.backward_data = n;
    if (q.input_requires_grad.at(1))
      w.elementwise.backward_data = checked_add(w.elementwise.backward_data, checked_add(n, n - b_elements));
    return w;
  };
  d.infer = infer_mul;
  // autocast: runs in its operands' dtype; mixed operands are promoted to the wider one.
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{};
  d.onnx_export = [](OnnxNodeWriter& w, const Op& op) { onnx_export::binary(w, op, "Mul"); };
  d.peer_module = "Mul";
  return d;
}

}  // namespace convbench

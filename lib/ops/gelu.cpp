// gelu, as nn.GELU: approximate none, y = x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2))) (ConvNeXt,
// ViT); approximate tanh, y = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))). Backward
// reads the input, as gelu_backward: dx = g * (Phi(x) + x * phi(x)) for erf, the tanh form's own
// derivative for tanh. FLOPs per element (erf and tanh counted as one each): erf forward 5
// (divide, erf, add, two products), backward 11 (Phi's 3, phi's x^2, scale, exp and constant,
// x * phi, the sum, g * ...); tanh forward 9, backward 15.
#include "ops/input_saving_activation.hpp"

namespace convbench {
namespace {

const char* approximation_word(GeluApproximation a) { return a == GeluApproximation::tanh ? "tanh" : "none"; }

}  // namespace

OpDefinition define_gelu() {
  OpDefinition d = input_saving_activation(OpKind::gelu, 5, 11);
  d.fields = {{"approximate", FieldKind::keyword, {"none", "tanh"}}};
  d.apply_fields = [](const OpFieldValues& f, const FieldContext&, Op& op) {
    op.gelu_approximate = f.is_keyword("approximate", "tanh") ? GeluApproximation::tanh : GeluApproximation::none;
  };
  d.attributes = [](const Op& op) {
    return nlohmann::ordered_json{{"approximate", approximation_word(op.gelu_approximate)}};
  };
  d.work = [](const WorkQuery& q) {
    const bool tanh = q.op.gelu_approximate == GeluApproximation::tanh;
    const int64_t n = q.output_elements();
    OpWork w;
    w.elementwise = {checked_mul(n, tanh ? 9 : 5), q.any_input_grad() ? checked_mul(n, tanh ? 15 : 11) : 0, 0};
    return w;
  };
  return d;
}

}  // namespace convbench

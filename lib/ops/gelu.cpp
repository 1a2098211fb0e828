// gelu, as nn.GELU: approximate none, y = x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2))) (ConvNeXt,
// ViT); approximate tanh, y = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))). Backward
// reads the input, as gelu_backward: dx = g * (Phi(x) + x * phi(x)) for erf, the tanh form's own
// derivative for tanh. FLOPs per element (erf and tanh counted as one each): erf forward 5
// (divide, erf, add, two products), backward 11 (Phi's 3, phi's x^2, scale, exp and constant,
// x * phi, the sum, g * ...); tanh forward 9, backward 15.
#include "ops/input_saving_activation.hpp"
#include "ops/onnx_export_helpers.hpp"
#include "util/markup_escape.hpp"

namespace convbench {
namespace {

const char* approximation_word(GeluApproximation a) { return a == GeluApproximation::tanh ? "tanh" : "none"; }

// nn.GELU as PyTorch exports it before opset 20's Gelu: x * (1 + erf(x / sqrt(2))) * 0.5, or
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) for approximate="tanh".
void gelu_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const std::string x = in(w, op);
  auto binary = [&](const char* type, const std::string& a, const std::string& b, const std::string& result = "") {
    const std::string y = result.empty() ? w.fresh(op.name + "/" + type) : result;
    w.node(type, result.empty() ? w.fresh(op.name + "/" + std::string(type)) : op.name, {a, b}, {y});
    return y;
  };
  if (op.gelu_approximate == GeluApproximation::tanh) {
    const std::string cube = binary("Mul", x, binary("Mul", x, x));
    const std::string inner = binary("Mul", scalar(w, op, "beta", 0.7978845608028654),
                                     binary("Add", x, binary("Mul", scalar(w, op, "kappa", 0.044715), cube)));
    const std::string t = w.fresh(op.name + "/tanh");
    w.node("Tanh", w.fresh(op.name + "/Tanh"), {inner}, {t});
    binary("Mul", scalar(w, op, "half", 0.5), binary("Mul", x, binary("Add", scalar(w, op, "one", 1.0), t)),
           out(w, op));
    return;
  }
  const std::string scaled = binary("Div", x, scalar(w, op, "sqrt_two", 1.4142135623730951));
  const std::string e = w.fresh(op.name + "/erf");
  w.node("Erf", w.fresh(op.name + "/Erf"), {scaled}, {e});
  const std::string plus_one = binary("Add", e, scalar(w, op, "one", 1.0));
  binary("Mul", binary("Mul", x, plus_one), scalar(w, op, "half", 0.5), out(w, op));
}

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
  d.onnx_export = gelu_onnx;
  d.peer_module = "nn.GELU";
  // ONNX's Gelu (opset 20 on); the erf form PyTorch writes before it is lib/onnx/onnx_gelu.cpp's.
  d.onnx_import =
      OnnxImport{.node = "Gelu", .fields = [](const OnnxNodeAttributes& a) {
                   OpFieldValues f;
                   const std::string approximate = a.text("approximate", "none");
                   if (approximate != "none" && approximate != "tanh")
                     a.refuse("approximate \"" + printable(approximate) + "\": ONNX's Gelu has none and tanh");
                   f.set("approximate", FieldKeyword{approximate});
                   return f;
                 }};
  return d;
}

}  // namespace convbench

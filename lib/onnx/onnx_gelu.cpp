// nn.GELU() (the erf form) as PyTorch's exporters write it before opset 20, which has Gelu:
// x / sqrt(2), Erf, + 1, then the products with x and with 1/2 in either order (the TorchScript
// exporter multiplies by x first, the default exporter by 1/2 first). Read as one gelu, so that
// its count and what it saves are nn.GELU's (one saved input), not five ops'.
#include <cmath>

#include "onnx/onnx_float.hpp"
#include "onnx/onnx_node_reading.hpp"
#include "util/markup_escape.hpp"

namespace convbench::onnx_reading {
namespace {

using Step = OnnxContext::GeluStep::Step;

bool near(std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-6 * std::abs(want); }

}  // namespace

bool translate_gelu_erf(OnnxContext& cx, const At& at, const std::string& type) {
  const Node& n = at.node;
  if (n.input_size() < 1 || n.output_size() < 1) return false;
  const auto step_of = [&](int k) -> const OnnxContext::GeluStep* {
    if (!has_input(n, k)) return nullptr;
    const auto it = cx.gelu.find(n.input(k));
    return it == cx.gelu.end() ? nullptr : &it->second;
  };
  const auto only_reader = [&](int k) {
    if (cx.uses[n.input(k)] != 1)
      at.refuse("a step of GELU's erf form (\"" + printable(n.input(k)) +
                "\") read by more than this node: convbench reads nn.GELU as exported, each step read once");
  };
  const auto next = [&](Step step, const OnnxContext::GeluStep& from) {
    cx.gelu[n.output(0)] = {step, from.x, from.channels_last};
  };
  if (type == "Erf") {
    const OnnxContext::GeluStep* s = step_of(0);
    if (!s || s->step != Step::scaled) return false;
    only_reader(0);
    next(Step::erf, *s);
    return true;
  }
  if (n.input_size() != 2) return false;
  if (type == "Div" || type == "Mul") {
    // x / sqrt(2), or x * (1 / sqrt(2)): the first step, from a value.
    const bool by_root2 =
        type == "Div" ? near(scalar_constant(at, 1), std::sqrt(2.0)) : near(scalar_constant(at, 1), std::sqrt(0.5));
    if (by_root2 && cx.values.count(n.input(0)) && !step_of(0)) {
      if (cx.uses[n.output(0)] != 1) return false;  // its one reader must be the Erf
      next(Step::scaled, {Step::scaled, cx.values.at(n.input(0)), cx.channels_last.count(n.input(0)) > 0});
      return true;
    }
  }
  if (type == "Add") {
    for (int k = 0; k < 2; ++k) {
      const OnnxContext::GeluStep* s = step_of(k);
      if (!s || s->step != Step::erf) continue;
      if (!near(scalar_constant(at, 1 - k), 1.0)) at.refuse("an Erf plus another number than 1: not GELU's erf form");
      only_reader(k);
      next(Step::one_plus, *s);
      return true;
    }
    return false;
  }
  if (type != "Mul") return false;
  for (int k = 0; k < 2; ++k) {
    const OnnxContext::GeluStep* s = step_of(k);
    if (!s) continue;
    const auto other = n.input(1 - k);
    const bool by_half = near(scalar_constant(at, 1 - k), 0.5);
    const bool by_x = cx.values.count(other) && cx.values.at(other) == s->x;
    only_reader(k);
    if (s->step == Step::one_plus && by_half) {
      next(Step::half_one_plus, *s);
    } else if (s->step == Step::one_plus && by_x) {
      next(Step::x_one_plus, *s);
    } else if ((s->step == Step::half_one_plus && by_x) || (s->step == Step::x_one_plus && by_half)) {
      OpFieldValues f;
      f.set("approximate", FieldKeyword{"none"});
      const bool view = s->channels_last;
      add_op(cx, at, "gelu", op_name(cx, n, at.index, ""), {s->x}, std::move(f), channels_of(cx, s->x));
      if (view) cx.channels_last.insert(n.output(0));
    } else {
      at.refuse("a product that is no step of GELU's erf form (x * (1 + erf(x / sqrt(2))) / 2)");
    }
    return true;
  }
  return false;
}

}  // namespace convbench::onnx_reading

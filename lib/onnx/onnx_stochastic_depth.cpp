// Dropout drawn in the graph, as PyTorch's exporters write it in a training export: torchvision's
// StochasticDepth(p, "row") (both exporters) and nn.Dropout and nn.Dropout2d/3d (the default
// exporter): a uniform noise of the units' shape, compared with the survival rate 1 - p, cast to a
// float mask, divided by the survival rate, and multiplied into the value. Read as the one op it
// is, by the noise's shape: one value per sample, drop_path; per channel, channel_dropout; per
// element, dropout; so that counts, saved bytes and the step are PyTorch's. In an eval-mode export
// these modules write no node at all.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_float.hpp"
#include "onnx/onnx_node_reading.hpp"
#include "util/markup_escape.hpp"

namespace convbench::onnx_reading {
namespace {

using Step = OnnxContext::Noise::Step;

// The survival rate a constant input holds, as the decimal its float32 stands for (both exporters
// write it so): 0.9 arrives as 0.8999999762, and p = 1 - 0.9 is meant.
double rate(const At& at, int k, const std::string& what) {
  const double v = one_number(at, k, what);
  return std::isfinite(v) ? onnx_float_value(static_cast<float>(v)) : v;
}

// Which units a noise of these dims drops from a value of `channels` channels: per sample
// (N x 1 x ...: drop_path), per channel (N x C x 1 x ...: channel_dropout), or per element (the
// value's shape, or N x C after a classifier's flatten: dropout).
std::string dropout_kind(const At& at, const std::vector<OnnxContext::ShapeDim>& dims,
                         std::optional<int64_t> channels) {
  using Dim = OnnxContext::ShapeDim;
  const auto is = [](const Dim& d, int64_t v) { return d.kind == Dim::Kind::number && d.value == v; };
  const auto rank = static_cast<int>(dims.size());
  bool ones_after_1 = rank >= 2, ones_after_2 = rank >= 3;
  for (int i = 1; i < rank; ++i) ones_after_1 = ones_after_1 && is(dims[static_cast<size_t>(i)], 1);
  for (int i = 2; i < rank; ++i) ones_after_2 = ones_after_2 && is(dims[static_cast<size_t>(i)], 1);
  const bool per_channel_dim = channels && rank >= 2 && is(dims[1], *channels);
  if (rank == at.cx.dims + 2 && ones_after_1) return "drop_path";
  if (rank == at.cx.dims + 2 && per_channel_dim && ones_after_2) return "channel_dropout";
  if ((rank == at.cx.dims + 2 || rank == 2) && per_channel_dim) return "dropout";
  std::string text;
  for (const Dim& d : dims)
    text += (text.empty() ? "" : "x") + (d.kind == Dim::Kind::number ? std::to_string(d.value) : std::string("?"));
  at.refuse("a noise of " + text + " for a value of " + (channels ? std::to_string(*channels) : std::string("?")) +
            " channels: convbench reads one value per sample (drop_path), per channel (channel_dropout) or per "
            "element (dropout)");
}

}  // namespace

bool translate_stochastic_depth(OnnxContext& cx, const At& at, const std::string& type) {
  const Node& n = at.node;
  const auto step_of = [&](int k) -> const OnnxContext::Noise* {
    if (!has_input(n, k)) return nullptr;
    const auto it = cx.noise.find(n.input(k));
    return it == cx.noise.end() ? nullptr : &it->second;
  };
  // Each step is read by the next one alone: a noise used elsewhere is not this pattern.
  const auto only_reader = [&](int k) {
    if (cx.uses[n.input(k)] != 1)
      at.refuse("the stochastic depth's noise \"" + printable(n.input(k)) +
                "\" is read by more than this node: convbench reads torchvision's StochasticDepth, whose every step "
                "reads the one before alone");
  };
  if (type == "RandomUniformLike") {
    // A tensor whose shape alone is read: a constant (the batch fixed at export), or what
    // ConstantOfShape filled to the shape computed from the value's Shape (a symbolic batch).
    const auto like = shape_only_input(at, 0);
    if (!like) at.refuse("a noise shaped like a computed value: convbench reads torchvision's stochastic depth noise");
    if (float_attribute(n, "low", 0.0) != 0.0 || float_attribute(n, "high", 1.0) != 1.0)
      at.refuse("a uniform noise other than over [0, 1): not torchvision's stochastic depth");
    cx.noise[n.output(0)] = {Step::uniform, 0.0, *like};
    return true;
  }
  const OnnxContext::Noise* first = step_of(0);
  if (type == "Less") {
    if (!first || first->step != Step::uniform) return false;
    only_reader(0);
    const double keep = rate(at, 1, "the survival rate (input 1)");
    if (!(keep > 0 && keep < 1))
      at.refuse("a survival rate of " + std::to_string(keep) + ": convbench's drop_path takes p = 1 - rate in (0, 1)");
    cx.noise[n.output(0)] = {Step::mask, keep, first->dims};
    return true;
  }
  if (type == "Cast") {
    if (!first || first->step != Step::mask) return false;
    only_reader(0);
    const int64_t to = int_attribute(n, "to", 0);
    if (to != onnx::TensorProto::FLOAT && to != onnx::TensorProto::DOUBLE && to != onnx::TensorProto::FLOAT16 &&
        to != onnx::TensorProto::BFLOAT16)
      at.refuse("a cast of the stochastic depth's mask to data type " + std::to_string(to) + ", not a float type");
    cx.noise[n.output(0)] = *first;
    return true;
  }
  if (type == "Div") {
    if (!first || first->step != Step::mask) return false;
    only_reader(0);
    if (rate(at, 1, "the divisor (input 1)") != first->keep)
      at.refuse("the mask divided by another number than its survival rate " + std::to_string(first->keep));
    cx.noise[n.output(0)] = {Step::scaled, first->keep, first->dims};
    return true;
  }
  // Mul: the block's value times the scaled mask, in either order.
  for (int k = 0; k < 2; ++k) {
    const OnnxContext::Noise* noise = step_of(k);
    if (!noise) continue;
    if (noise->step != Step::scaled)
      at.refuse(
          "a product with the stochastic depth's noise before it is divided by its survival rate: not "
          "torchvision's StochasticDepth");
    only_reader(k);
    const std::string x = data_input(at, 1 - k);
    const auto channels = channels_of(cx, x);
    const std::string op = dropout_kind(at, noise->dims, channels);
    OpFieldValues f;
    // p as the module holds it: 1 - 0.9 is 0.1, not 0.09999999999999998.
    f.set("p", std::round((1.0 - noise->keep) * 1e12) / 1e12);
    add_op(cx, at, op, op_name(cx, n, at.index, ""), {x}, std::move(f), channels);
    return true;
  }
  return false;
}

}  // namespace convbench::onnx_reading

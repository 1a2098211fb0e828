// ConvNeXt's channels-last stretch as PyTorch's exporters write torchvision's LayerNorm2d and
// CNBlock (and timm's ConvNeXt): x.permute(0, 2, 3, 1) (a Transpose to N x spatial x C), nn.LayerNorm
// over the last axis (LayerNormalization), nn.Linear on the channels (MatMul by the transposed
// weight, then the Add of its bias), pointwise activations, timm's LayerScale (a Mul by C values),
// and permute(0, 3, 1, 2) back. convbench's values are logical N x C x spatial whatever their
// memory layout, so the stretch becomes the same ops on the channels-first value: a layer_norm
// over the channels, a 1x1 conv with the Linear's weight and bias, a layer_scale. What each keeps
// for backward and counts is what PyTorch's module keeps and counts (tests/onnx_peer_test.py).
#include <algorithm>

#include "onnx/onnx_node_reading.hpp"
#include "util/markup_escape.hpp"

namespace convbench::onnx_reading {
namespace {

// (0, 2, ..., d + 1, 1): to channels-last; (0, d + 1, 1, ..., d): back.
std::vector<int64_t> to_last(int dims) {
  std::vector<int64_t> p = {0};
  for (int i = 2; i < dims + 2; ++i) p.push_back(i);
  p.push_back(1);
  return p;
}
std::vector<int64_t> to_first(int dims) {
  std::vector<int64_t> p = {0, dims + 1};
  for (int i = 1; i <= dims; ++i) p.push_back(i);
  return p;
}

bool is_view(const OnnxContext& cx, const Node& n, int k) {
  return has_input(n, k) && cx.channels_last.count(n.input(k)) > 0;
}

// A constant of one value per channel on the last axis (C), (1, ..., 1, C) or any leading ones.
bool is_last_axis_constant(const At& at, int k, int64_t channels) {
  const OnnxTensor& t = constant_input(at, k, "the constant");
  if (t.dims.empty() || t.dims.back() != channels) return false;
  return std::all_of(t.dims.begin(), t.dims.end() - 1, [](int64_t d) { return d == 1; });
}

// The 1x1 conv nn.Linear is on the channels: MatMul of the view by a (C_in, C_out) weight, or by
// the Transpose of the Linear's own (C_out, C_in) weight, as the TorchScript exporter writes it.
void translate_pointwise_linear(OnnxContext& cx, const At& at) {
  const std::string x = data_input(at, 0);
  if (!has_input(at.node, 1)) at.refuse("input 1 (the weight) is missing");
  const auto transposed = cx.transposed_weights.find(at.node.input(1));
  const bool stored_out_in = transposed != cx.transposed_weights.end();
  const std::string weight_name = stored_out_in ? transposed->second : at.node.input(1);
  const auto w = cx.constants.find(weight_name);
  if (w == cx.constants.end())
    at.refuse(
        "a MatMul of a channels-last view by a computed value: convbench reads one by a stored weight (nn.Linear)");
  if (w->second.dims.size() != 2) at.refuse("a MatMul weight that is not a matrix");
  const int64_t in = stored_out_in ? w->second.dims[1] : w->second.dims[0];
  const int64_t out = stored_out_in ? w->second.dims[0] : w->second.dims[1];
  if (const auto c = channels_of(cx, x); c && *c != in)
    at.refuse("its weight takes " + std::to_string(in) + " channels, its input has " + std::to_string(*c));
  OpFieldValues f;
  const std::vector<int64_t> ones(static_cast<size_t>(cx.dims), 1), zeros(static_cast<size_t>(cx.dims), 0);
  f.set("out_channels", field_size(at, out, "the output features"));
  f.set("kernel", ones);
  f.set("stride", ones);
  f.set("padding", zeros);
  f.set("dilation", ones);
  f.set("groups", int64_t{1});
  f.set("bias", false);
  ImportedOp& op = add_op(cx, at, "conv", op_name(cx, at.node, at.index, weight_name), {x}, std::move(f), out);
  const std::string where = onnx_node_label(at.node, at.index) + ".input[1] (" + printable(weight_name) + ")";
  const GivenValues stored = read_onnx_values(cx, w->second, where);
  if (stored_out_in) {
    op.values["weight"] = stored;  // (out, in): the 1x1 conv's (out, in, 1, ...) in the same order
  } else {
    hold_onnx_values(cx, static_cast<int64_t>(stored->size()), where);
    std::vector<double> weight(stored->size());
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o)
        weight[static_cast<size_t>(o * in + i)] = (*stored)[static_cast<size_t>(i * out + o)];
    op.values["weight"] = std::make_shared<const std::vector<double>>(std::move(weight));
  }
  cx.open_bias.insert(op.name);
}

}  // namespace

bool reads_channels_last(const At& at) {
  for (int k = 0; k < at.node.input_size(); ++k)
    if (is_view(at.cx, at.node, k)) return true;
  return false;
}

bool translate_channels_last(OnnxContext& cx, const At& at, const std::string& type) {
  const Node& n = at.node;
  if (type == "Transpose") {
    if (has_input(n, 0) && cx.shuffle_groups.count(n.input(0))) return false;  // ShuffleNet's
    const auto perm = ints_attribute(n, "perm");
    if (is_constant_input(at, 0)) {
      if (constant_input(at, 0, "the tensor").dims.size() != 2 || (perm && *perm != std::vector<int64_t>{1, 0}))
        at.refuse("a Transpose of a constant other than a matrix's: convbench reads one of a Linear's weight");
      cx.transposed_weights[n.output(0)] = n.input(0);
      return true;
    }
    const std::string x = data_input(at, 0);
    const bool view = is_view(cx, n, 0);
    if (!view && perm == to_last(cx.dims)) {
      cx.values[n.output(0)] = x;
      cx.channels_last.insert(n.output(0));
      return true;
    }
    if (view && perm == to_first(cx.dims)) {
      cx.values[n.output(0)] = x;
      return true;
    }
    return false;  // another permutation: a channel shuffle's, or refused there
  }
  if (type == "LayerNormalization") {
    if (!is_view(cx, n, 0))
      at.refuse(
          "a LayerNormalization of a channels-first value: convbench reads one over the channels of a "
          "channels-last view (torchvision's LayerNorm2d: permute, LayerNorm, permute back)");
    const std::string x = data_input(at, 0);
    const auto channels = channels_of(cx, x);
    const int64_t axis = int_attribute(n, "axis", -1);
    if (axis != -1 && axis != cx.dims + 1) at.refuse("a LayerNormalization over more than the last axis");
    if (!channels) at.refuse("a LayerNormalization of a value whose channels are not known");
    if (!has_input(n, 2)) at.refuse("a LayerNormalization without a bias: convbench's layer_norm has one");
    if (constant_input(at, 1, "the scale").dims != std::vector<int64_t>{*channels} ||
        (has_input(n, 2) && constant_input(at, 2, "the bias").dims != std::vector<int64_t>{*channels}))
      at.refuse("a scale or bias that is not one value per channel");
    OpFieldValues f;
    take_norm_constants(at, false, f);
    ImportedOp& op = add_op(cx, at, "layer_norm", op_name(cx, n, at.index, n.input(1)), {x}, std::move(f), channels);
    take_values(cx, at, 1, "weight", op);
    take_values(cx, at, 2, "bias", op);
    cx.channels_last.insert(n.output(0));
    return true;
  }
  if (!reads_channels_last(at)) return false;
  if (type == "MatMul") {
    translate_pointwise_linear(cx, at);
    cx.channels_last.insert(n.output(0));
    return true;
  }
  if ((type == "Add" || type == "Mul") && n.input_size() == 2 &&
      (is_constant_input(at, 0) || is_constant_input(at, 1))) {
    const int k = is_constant_input(at, 0) ? 0 : 1;
    const std::string x = data_input(at, 1 - k);
    const auto channels = channels_of(cx, x);
    if (!channels || !is_last_axis_constant(at, k, *channels))
      at.refuse("an " + type + " of a channels-last view and a constant that is not one value per channel");
    if (type == "Add") {
      // nn.Linear's bias, added to the MatMul's product that nothing else reads.
      ImportedOp* op = op_named(cx, x);
      if (!op || !cx.open_bias.count(op->name) || cx.uses[n.input(1 - k)] != 1)
        at.refuse(
            "an Add of a constant to a channels-last view that is not a MatMul's product: convbench reads "
            "there a Linear's bias");
      op->fields.set("bias", true);
      take_values(cx, at, k, "bias", *op);
      cx.open_bias.erase(op->name);
      cx.values[n.output(0)] = op->name;
    } else {  // timm's LayerScale on the channels-last tensor: gamma * x
      ImportedOp& op =
          add_op(cx, at, "layer_scale", op_name(cx, n, at.index, stored_name(at, k) + ".weight"), {x}, {}, channels);
      take_values(cx, at, k, "weight", op);
    }
    cx.channels_last.insert(n.output(0));
    return true;
  }
  return false;
}

}  // namespace convbench::onnx_reading

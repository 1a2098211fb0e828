// Each ONNX node as convbench ops (configs/README.md "ONNX variants" has the table): the node's
// attributes and constant inputs become the op's fields, and anything the op would compute
// differently (asymmetric pads, ceil-mode pooling, broadcasting by a constant) is refused at the
// node, never approximated.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "onnx/onnx_float.hpp"
#include "onnx/onnx_node_reading.hpp"
#include "ops/op_registry.hpp"
#include "util/input_error.hpp"
#include "util/join.hpp"
#include "util/markup_escape.hpp"

namespace convbench {
namespace onnx_reading {

const onnx::AttributeProto* find_attribute(const Node& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attribute(const Node& n, const std::string& name, int64_t fallback) {
  const auto* a = find_attribute(n, name);
  return a ? a->i() : fallback;
}

double float_attribute(const Node& n, const std::string& name, double fallback) {
  const auto* a = find_attribute(n, name);
  return a ? onnx_float_value(a->f()) : fallback;
}

std::string string_attribute(const Node& n, const std::string& name, const std::string& fallback) {
  const auto* a = find_attribute(n, name);
  return a ? a->s() : fallback;
}

std::optional<std::vector<int64_t>> ints_attribute(const Node& n, const std::string& name) {
  const auto* a = find_attribute(n, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

bool has_input(const Node& n, int k) { return n.input_size() > k && !n.input(k).empty(); }

// The convbench value input k of the node reads: produced by an earlier node, or the block input.
std::string data_input(const At& at, int k) {
  if (!has_input(at.node, k)) at.refuse("input " + std::to_string(k) + " is missing");
  const std::string& name = at.node.input(k);
  if (at.cx.constants.count(name))
    at.refuse("input " + std::to_string(k) + " (\"" + printable(name) +
              "\") is a constant, where convbench's op takes values computed from the block input");
  const auto it = at.cx.values.find(name);
  if (it == at.cx.values.end())
    at.refuse("input \"" + printable(name) +
              "\" is not computed before this node (nodes out of order, a cycle, or an input convbench "
              "did not translate)");
  return it->second;
}

const OnnxTensor& constant_input(const At& at, int k, const std::string& what) {
  if (!has_input(at.node, k)) at.refuse(what + " (input " + std::to_string(k) + ") is missing");
  const auto it = at.cx.constants.find(at.node.input(k));
  if (it == at.cx.constants.end())
    at.refuse(what + " (input " + std::to_string(k) + ", \"" + printable(at.node.input(k)) +
              "\") must be a constant (an initializer or a Constant node)");
  return it->second;
}

std::vector<int64_t> integers(const At& at, const OnnxTensor& t, const std::string& what) {
  if (!t.values) at.refuse(what + " has no values convbench can read");
  std::vector<int64_t> out;
  for (const double v : *t.values) {
    if (v != std::floor(v) || std::abs(v) > 9.2e18) at.refuse(what + " holds a value that is not an integer");
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

// A size the op's field takes (channels, kernel, groups, ...): at least 1 and at most 2^31, as a
// spec's fields are.
int64_t field_size(const At& at, int64_t v, const std::string& what) {
  if (v < 1 || v > (int64_t{1} << 31))
    at.refuse(what + " is " + std::to_string(v) + ": convbench takes sizes from 1 to 2^31");
  return v;
}

// A name for the op: its weight's name without ".weight" (PyTorch's parameter names, so that the
// op's parameters are named as the module's), else the node's, else its type and index; made
// unique and safe for results.
std::string op_name(OnnxContext& cx, const Node& n, int index, const std::string& weight) {
  std::string base;
  const std::string suffix = ".weight";
  if (!weight.empty() && weight.size() > suffix.size() && weight.ends_with(suffix))
    base = weight.substr(0, weight.size() - suffix.size());
  else if (!n.name().empty())
    base = n.name();
  else
    base = n.op_type() + "_" + std::to_string(index);
  std::string safe;
  for (const char c : base) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (c == '/' && safe.empty()) continue;  // "/conv1/Conv": no leading separator
    safe += ok ? c : '.';
  }
  if (safe.empty() || safe == "input") safe = n.op_type() + "_" + std::to_string(index);
  std::string name = safe;
  for (int k = 2; cx.names.count(name); ++k) name = safe + "_" + std::to_string(k);
  cx.names.insert(name);
  return name;
}

// Whether an op whose inputs all have spatial size 1 gives an output of spatial size 1: every op
// that keeps its input's size does, and a conv whose kernel is 1 with no padding (any stride).
bool keeps_spatial_one(const std::string& op, const OpFieldValues& fields) {
  if (op == "conv") {
    const auto kernel = fields.get<std::vector<int64_t>>("kernel").value_or(std::vector<int64_t>{});
    const auto padding = fields.get<std::vector<int64_t>>("padding").value_or(std::vector<int64_t>{});
    return std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1; }) &&
           std::all_of(padding.begin(), padding.end(), [](int64_t p) { return p == 0; });
  }
  return op != "conv_transpose" && op != "max_pool" && op != "avg_pool" && op != "upsample" && op != "space_to_depth" &&
         op != "depth_to_space";
}

ImportedOp& add_op(OnnxContext& cx, const At& at, const std::string& op, const std::string& name,
                   std::vector<std::string> inputs, OpFieldValues fields, std::optional<int64_t> channels, int output) {
  if (at.node.output_size() <= output || at.node.output(output).empty()) at.refuse("has no output");
  const bool spatial_one =
      op == "global_avg_pool" || op == "linear" ||
      (!inputs.empty() && keeps_spatial_one(op, fields) &&
       std::all_of(inputs.begin(), inputs.end(), [&](const std::string& in) { return cx.spatial_one.count(in) > 0; }));
  if (spatial_one) cx.spatial_one.insert(name);
  cx.ops.push_back({op, name, std::move(inputs), std::move(fields), onnx_node_label(at.node, at.index), {}});
  cx.values[at.node.output(output)] = name;
  if (channels) cx.channels[name] = *channels;
  return cx.ops.back();
}

// Constant input k's values as the starting values of the op's parameter or buffer `suffix`.
void take_values(OnnxContext& cx, const At& at, int k, const std::string& suffix, ImportedOp& op) {
  // constant_input first: it refuses a missing input k before the label below reads its name.
  const OnnxTensor& tensor = constant_input(at, k, suffix);
  const std::string where =
      onnx_node_label(at.node, at.index) + ".input[" + std::to_string(k) + "] (" + printable(at.node.input(k)) + ")";
  op.values[suffix] = read_onnx_values(cx, tensor, where);
}

// A norm's epsilon (and batch norm's momentum, ONNX's being 1 - PyTorch's) as the op's fields,
// set only where they differ from PyTorch's defaults (torchvision's MobileNetV3 and EfficientNet
// write epsilon 0.001); the op's definition checks their range.
void take_norm_constants(const At& at, bool batch_norm, OpFieldValues& f) {
  const double eps = float_attribute(at.node, "epsilon", 1e-5);
  if (std::abs(eps - 1e-5) > 1e-11) f.set("eps", eps);
  if (batch_norm) {
    const double momentum = float_attribute(at.node, "momentum", 0.9);
    if (std::abs(momentum - 0.9) > 1e-6) f.set("momentum", 1.0 - momentum);
  }
}

std::optional<int64_t> channels_of(const OnnxContext& cx, const std::string& value) {
  const auto it = cx.channels.find(value);
  return it == cx.channels.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

bool is_constant_input(const At& at, int k) {
  return has_input(at.node, k) && at.cx.constants.count(at.node.input(k)) > 0;
}

std::optional<double> scalar_constant(const At& at, int k) {
  if (!is_constant_input(at, k)) return std::nullopt;
  const OnnxTensor& t = at.cx.constants.at(at.node.input(k));
  if (!t.values || t.values->size() != 1) return std::nullopt;
  return t.values->front();
}

double one_number(const At& at, int k, const std::string& what) {
  constant_input(at, k, what);  // refuses a missing input or a computed value, naming it
  const auto v = scalar_constant(at, k);
  if (!v) at.refuse(what + " is not one number");
  return *v;
}

std::string stored_name(const At& at, int k) {
  const OnnxTensor& t = constant_input(at, k, "the constant");
  return t.proto && !t.proto->name().empty() ? t.proto->name() : at.node.input(k);
}

bool is_per_channel_constant(const At& at, int k, int64_t channels) {
  const OnnxTensor& c = constant_input(at, k, "the constant");
  const auto rank = static_cast<int64_t>(at.cx.dims + 2), crank = static_cast<int64_t>(c.dims.size());
  int64_t channel_axis = -1, count = 1;
  for (int64_t i = 0; i < crank; ++i) {
    count *= c.dims[static_cast<size_t>(i)];
    if (c.dims[static_cast<size_t>(i)] != 1) channel_axis = rank - crank + i;
  }
  return crank <= rank && count == channels && (channels == 1 || channel_axis == 1);
}

}  // namespace onnx_reading

namespace {

using namespace onnx_reading;

int spatial_dims(const At& at) { return at.cx.dims; }

// blocksize^dims of a SpaceToDepth or DepthToSpace (blocksize 1 to 2^31): the channels it
// multiplies or divides by, refused past 2^31 (a block of 2^16 in 2-D is already 2^32).
int64_t block_volume(const At& at, int64_t block) {
  int64_t factor = 1;
  for (int i = 0; i < spatial_dims(at); ++i) {
    if (factor > (int64_t{1} << 31) / block)
      at.refuse("blocksize " + std::to_string(block) + " to the power " + std::to_string(spatial_dims(at)) +
                " is more than the 2^31 channels convbench takes");
    factor *= block;
  }
  return factor;
}

// Kernel, stride, padding and dilation of a Conv, ConvTranspose or pool, as convbench's fields:
// padding symmetric (begin = end), or SAME / VALID.
void window_fields(const At& at, const std::vector<int64_t>& kernel, OpFieldValues& f, bool pool) {
  const size_t d = kernel.size();
  const std::vector<int64_t> ones(d, 1);
  const auto strides = ints_attribute(at.node, "strides").value_or(ones);
  const auto dilations = ints_attribute(at.node, "dilations").value_or(ones);
  if (strides.size() != d || dilations.size() != d)
    at.refuse("strides or dilations do not have one value per spatial dim");
  std::vector<int64_t> pads = ints_attribute(at.node, "pads").value_or(std::vector<int64_t>(2 * d, 0));
  const std::string auto_pad = string_attribute(at.node, "auto_pad", "NOTSET");
  std::vector<int64_t> padding(d, 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < d; ++i) {
      const int64_t total = dilations[i] * (kernel[i] - 1);
      if (strides[i] != 1 || total % 2 != 0)
        at.refuse("auto_pad " + auto_pad +
                  " pads unevenly here (stride or an even kernel): convbench pads both sides alike");
      padding[i] = total / 2;
    }
  } else if (auto_pad == "NOTSET" || auto_pad == "VALID") {
    if (auto_pad == "NOTSET") {
      if (pads.size() != 2 * d) at.refuse("pads does not have two values per spatial dim");
      for (size_t i = 0; i < d; ++i) {
        if (pads[i] != pads[i + d])
          at.refuse("asymmetric pads (" + std::to_string(pads[i]) + " before, " + std::to_string(pads[i + d]) +
                    " after): convbench pads both sides alike");
        if (pads[i] < 0) at.refuse("negative pads");
        padding[i] = pads[i];
      }
    }
  } else {
    at.refuse("auto_pad \"" + printable(auto_pad) + "\" is not an ONNX padding mode");
  }
  for (const int64_t s : strides) field_size(at, s, "a stride");
  for (const int64_t x : dilations) field_size(at, x, "a dilation");
  for (const int64_t k : kernel) field_size(at, k, "a kernel size");
  for (const int64_t p : padding)
    if (p > (int64_t{1} << 31)) at.refuse("a padding above 2^31");
  f.set("kernel", kernel);
  f.set("stride", strides);
  f.set("padding", padding);
  if (pool) {
    if (dilations != ones) at.refuse("dilated pooling: convbench's pools are not dilated");
    if (int_attribute(at.node, "ceil_mode", 0) != 0) at.refuse("ceil_mode 1: convbench's pools round down");
  } else {
    f.set("dilation", dilations);
  }
}

void translate_conv(OnnxContext& cx, const At& at, bool transpose) {
  const std::string x = data_input(at, 0);
  const OnnxTensor& w = constant_input(at, 1, "the weight");
  const int d = spatial_dims(at);
  if (static_cast<int>(w.dims.size()) != d + 2)
    at.refuse("a weight of rank " + std::to_string(w.dims.size()) + " for a " + std::to_string(d) + "-D input");
  for (const int64_t dim : w.dims) field_size(at, dim, "a dimension of its weight");
  const int64_t groups = field_size(at, int_attribute(at.node, "group", 1), "group");
  const std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  if (const auto ks = ints_attribute(at.node, "kernel_shape"); ks && *ks != kernel)
    at.refuse("kernel_shape disagrees with the weight's shape");
  const int64_t in = transpose ? w.dims[0] : w.dims[1] * groups;
  const int64_t out = transpose ? w.dims[1] * groups : w.dims[0];
  if (const auto c = channels_of(cx, x); c && *c != in)
    at.refuse("its weight takes " + std::to_string(in) + " input channels, its input has " + std::to_string(*c));
  OpFieldValues f;
  f.set("out_channels", out);
  window_fields(at, kernel, f, false);
  f.set("groups", groups);
  f.set("bias", has_input(at.node, 2));
  if (has_input(at.node, 2)) {
    const OnnxTensor& b = constant_input(at, 2, "the bias");
    if (b.dims != std::vector<int64_t>{out}) at.refuse("its bias does not have one value per output channel");
  }
  if (transpose) {
    if (find_attribute(at.node, "output_shape")) at.refuse("output_shape: give pads and output_padding instead");
    if (const auto op = ints_attribute(at.node, "output_padding")) f.set("output_padding", *op);
  }
  ImportedOp& op = add_op(cx, at, transpose ? "conv_transpose" : "conv",
                          op_name(cx, at.node, at.index, at.node.input(1)), {x}, std::move(f), out);
  take_values(cx, at, 1, "weight", op);  // ONNX's weight layout is PyTorch's and convbench's
  if (has_input(at.node, 2)) take_values(cx, at, 2, "bias", op);
}

void translate_norm(OnnxContext& cx, const At& at, const std::string& type) {
  const std::string x = data_input(at, 0);
  const OnnxTensor& scale = constant_input(at, 1, "the scale");
  OpFieldValues f;
  std::string kind = "batch_norm";
  int64_t groups = 0;
  if (type == "InstanceNormalization") {
    kind = "group_norm";  // one group per channel
    if (scale.dims.size() != 1) at.refuse("a scale that is not one value per channel");
    groups = field_size(at, scale.dims[0], "the scale's length");
  } else if (type == "GroupNormalization") {
    kind = "group_norm";
    groups = field_size(at, int_attribute(at.node, "num_groups", 0), "num_groups");
  }
  if (groups) f.set("norm_groups", groups);
  take_norm_constants(at, kind == "batch_norm", f);
  // The bias (and batch norm's running statistics) have one value where the scale has one.
  const std::vector<std::string> constants = {"the scale", "the bias", "the running mean", "the running variance"};
  for (int k = 2; k <= (kind == "batch_norm" ? 4 : 2); ++k)
    if (constant_input(at, k, constants[static_cast<size_t>(k - 1)]).dims != scale.dims)
      at.refuse(constants[static_cast<size_t>(k - 1)] + " (input " + std::to_string(k) +
                ") does not have the scale's shape: one value each where the scale has one");
  const auto channels = channels_of(cx, x);
  // The groups split the channels evenly (the per-group scale below is spread by c / (C / G)).
  if (type == "GroupNormalization" && channels && (groups > *channels || *channels % groups != 0))
    at.refuse("num_groups " + std::to_string(groups) + " does not divide its input's " + std::to_string(*channels) +
              " channels into equal groups");
  if (type == "GroupNormalization" && scale.dims != std::vector<int64_t>{groups} &&
      !(channels && scale.dims == std::vector<int64_t>{*channels}))
    at.refuse("a scale that is neither one value per group (opset 18) nor one per channel (opset 21)");
  ImportedOp& op = add_op(cx, at, kind, op_name(cx, at.node, at.index, at.node.input(1)), {x}, std::move(f), channels);
  take_values(cx, at, 1, "weight", op);
  take_values(cx, at, 2, "bias", op);
  if (kind == "batch_norm") {
    take_values(cx, at, 3, "running_mean", op);
    take_values(cx, at, 4, "running_var", op);
  } else if (type == "GroupNormalization" && channels && scale.dims == std::vector<int64_t>{groups} &&
             groups != *channels) {
    // Opset 18's GroupNormalization scales each group (21's, each channel, as PyTorch): every
    // channel takes its group's value.
    for (const char* suffix : {"weight", "bias"}) {
      hold_onnx_values(cx, *channels, onnx_node_label(at.node, at.index));
      std::vector<double> per_channel;
      for (int64_t c = 0; c < *channels; ++c)
        per_channel.push_back(op.values[suffix]->at(static_cast<size_t>(c / (*channels / groups))));
      op.values[suffix] = std::make_shared<const std::vector<double>>(std::move(per_channel));
    }
  }
}

void translate_slice(OnnxContext& cx, const At& at) {
  const std::string x = data_input(at, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (cx.opset < 10) {
    starts = ints_attribute(at.node, "starts").value_or(std::vector<int64_t>{});
    ends = ints_attribute(at.node, "ends").value_or(std::vector<int64_t>{});
    axes = ints_attribute(at.node, "axes").value_or(std::vector<int64_t>{});
  } else {
    // Constants, or shape arithmetic on known channels (the TorchScript exporter's chunk).
    starts = known_integers(at, 1, "starts");
    ends = known_integers(at, 2, "ends");
    if (has_input(at.node, 3)) axes = known_integers(at, 3, "axes");
    if (has_input(at.node, 4)) steps = known_integers(at, 4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const int rank = spatial_dims(at) + 2;
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || (axes[0] != 1 && axes[0] != 1 - rank))
    at.refuse("slices other than one range of channels (axis 1): convbench's slice takes channels");
  for (const int64_t s : steps)
    if (s != 1) at.refuse("a step other than 1");
  const auto c = channels_of(cx, x);
  if (!c) at.refuse("its input's channels are not known here");
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + *c : v, int64_t{0}, *c); };
  const int64_t start = clamp(starts[0]), end = clamp(ends[0]);
  if (end <= start) at.refuse("an empty channel range");
  OpFieldValues f;
  f.set("start", start);
  f.set("length", end - start);
  add_op(cx, at, "slice", op_name(cx, at.node, at.index, ""), {x}, std::move(f), end - start);
}

// Split along the channels (torch.chunk and torch.split as the default exporter writes them;
// ShuffleNetV2's x.chunk(2, dim=1)): one slice op per output, the sizes given as an input (opset
// 13 on), an attribute (before), or num_outputs (opset 18 on: equal parts, the last smaller).
void translate_split(OnnxContext& cx, const At& at) {
  const std::string x = data_input(at, 0);
  const int rank = cx.dims + 2;
  const int64_t axis = int_attribute(at.node, "axis", 0);
  if (axis != 1 && axis != 1 - rank) at.refuse("a Split along an axis other than channels");
  const auto c = channels_of(cx, x);
  if (!c) at.refuse("its input's channels are not known here");
  std::vector<int64_t> sizes;
  if (has_input(at.node, 1))
    sizes = known_integers(at, 1, "the split sizes");
  else if (const auto split = ints_attribute(at.node, "split"))
    sizes = *split;
  const int outputs = at.node.output_size();
  if (sizes.empty()) {
    const int64_t parts = int_attribute(at.node, "num_outputs", outputs);
    if (parts != outputs || parts < 1) at.refuse("num_outputs does not match its outputs");
    const int64_t each = (*c + parts - 1) / parts;
    for (int64_t start = 0; start < *c; start += each) sizes.push_back(std::min(each, *c - start));
  }
  int64_t total = 0;
  for (const int64_t s : sizes) {
    if (s < 1 || s > *c) at.refuse("a part that is empty, negative or larger than its input's channels");
    total += s;  // each at most 2^31, and at most 2^31 outputs: no overflow
  }
  if (static_cast<int>(sizes.size()) != outputs || total != *c)
    at.refuse("parts that do not cover its input's " + std::to_string(*c) + " channels with one per output");
  int64_t start = 0;
  for (int k = 0; k < outputs; ++k) {
    OpFieldValues f;
    f.set("start", start);
    f.set("length", sizes[static_cast<size_t>(k)]);
    if (!at.node.output(k).empty())
      add_op(cx, at, "slice", op_name(cx, at.node, at.index, ""), {x}, std::move(f), sizes[static_cast<size_t>(k)], k);
    start += sizes[static_cast<size_t>(k)];
  }
}

void translate_resize(OnnxContext& cx, const At& at, const std::string& type) {
  const std::string x = data_input(at, 0);
  const int d = spatial_dims(at);
  const std::string mode = string_attribute(at.node, "mode", "nearest");
  OpFieldValues f;
  if (mode == "nearest") {
    f.set("mode", FieldKeyword{"nearest"});
    if (type == "Resize" && cx.opset >= 11) {
      const std::string ct = string_attribute(at.node, "coordinate_transformation_mode", "half_pixel");
      const std::string nm = string_attribute(at.node, "nearest_mode", "round_prefer_floor");
      if (ct != "asymmetric" || nm != "floor")
        at.refuse("nearest with coordinate_transformation_mode " + printable(ct) + " and nearest_mode " +
                  printable(nm) + ": convbench's nearest upsample is PyTorch's (asymmetric, floor)");
    }
  } else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") {
    f.set("mode", FieldKeyword{"linear"});
    const std::string ct = string_attribute(at.node, "coordinate_transformation_mode",
                                            type == "Resize" && cx.opset >= 11 ? "half_pixel" : "asymmetric");
    if (ct == "align_corners")
      f.set("align_corners", true);
    else if (ct == "half_pixel" || ct == "pytorch_half_pixel")
      f.set("align_corners", false);
    else
      at.refuse("linear with coordinate_transformation_mode " + printable(ct) +
                ": convbench's is PyTorch's (half_pixel, or align_corners)");
  } else {
    at.refuse("mode \"" + printable(mode) + "\": convbench upsamples nearest or linear");
  }
  // The scales: an attribute (Upsample 7), else an input (Upsample 9: 1; Resize 10: 1; Resize 11+:
  // 2, or the sizes at 3).
  std::optional<std::vector<double>> scales;
  if (const auto* a = find_attribute(at.node, "scales"))
    scales = std::vector<double>(a->floats().begin(), a->floats().end());
  const int scales_input = type == "Resize" && cx.opset >= 11 ? 2 : 1;
  if (!scales && has_input(at.node, scales_input)) {
    const OnnxTensor& t = constant_input(at, scales_input, "the scales");
    if (!t.dims.empty() && t.dims[0] > 0) scales = t.values;
  }
  if (scales) {
    for (const double v : *scales)
      if (!std::isfinite(v))
        at.refuse("a scale of " +
                  std::string(std::isnan(v) ? "NaN"
                              : v > 0       ? "infinity"
                                            : "-infinity") +
                  ": scales are finite whole numbers >= 1");
    if (static_cast<int>(scales->size()) != d + 2 || (*scales)[0] != 1 || (*scales)[1] != 1)
      at.refuse("scales must be 1 for batch and channels and given for every spatial dim");
    const double s = (*scales)[2];
    for (int i = 2; i < d + 2; ++i)
      if ((*scales)[static_cast<size_t>(i)] != s) at.refuse("different scales per spatial dim");
    if (s < 1 || s != std::floor(s)) at.refuse("a scale that is not a whole number >= 1");
    if (s > static_cast<double>(int64_t{1} << 31))
      at.refuse("a scale of " + std::to_string(s) + ": convbench takes scales from 1 to 2^31");
    f.set("scale", static_cast<int64_t>(s));
  } else if (type == "Resize" && has_input(at.node, 3)) {
    const auto sizes = integers(at, constant_input(at, 3, "the sizes"), "the sizes");
    if (static_cast<int>(sizes.size()) != d + 2) at.refuse("sizes must give every dim");
    if (mode == "nearest") at.refuse("nearest to given sizes: convbench's nearest upsample takes a scale");
    f.set("size", std::vector<int64_t>(sizes.begin() + 2, sizes.end()));
  } else {
    at.refuse("neither scales nor sizes");
  }
  add_op(cx, at, "upsample", op_name(cx, at.node, at.index, ""), {x}, std::move(f), channels_of(cx, x));
}

// Flatten's output, read by Gemm or MatMul: convbench's linear flattens its (N, C, 1, ...) input.
void translate_linear(OnnxContext& cx, const At& at, const std::string& type) {
  const std::string x = data_input(at, 0);
  const OnnxTensor& w = constant_input(at, 1, "the weight");
  if (w.dims.size() != 2) at.refuse("a weight that is not a matrix");
  int64_t out = w.dims[1];
  bool bias = false, transposed = false;  // transposed: stored (out, in), as nn.Linear's weight is
  if (type == "Gemm") {
    if (int_attribute(at.node, "transA", 0) != 0) at.refuse("transA");
    if (float_attribute(at.node, "alpha", 1) != 1 || float_attribute(at.node, "beta", 1) != 1)
      at.refuse("alpha or beta other than 1");
    transposed = int_attribute(at.node, "transB", 0) != 0;
    if (transposed) out = w.dims[0];
    bias = has_input(at.node, 2);
    if (bias && constant_input(at, 2, "the bias").dims != std::vector<int64_t>{out})
      at.refuse("a bias that is not one value per output feature");
  }
  OpFieldValues f;
  f.set("out_features", field_size(at, out, "the output features"));
  f.set("bias", bias);
  ImportedOp& op = add_op(cx, at, "linear", op_name(cx, at.node, at.index, at.node.input(1)), {x}, std::move(f), out);
  take_values(cx, at, 1, "weight", op);
  if (!transposed) {  // stored (in, out), as MatMul and Gemm without transB take it
    const std::vector<double>& stored = *op.values["weight"];
    hold_onnx_values(cx, static_cast<int64_t>(stored.size()), onnx_node_label(at.node, at.index));
    std::vector<double> weight(stored.size());
    const int64_t in = w.dims[0];
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o)
        weight[static_cast<size_t>(o * in + i)] = stored[static_cast<size_t>(i * out + o)];
    op.values["weight"] = std::make_shared<const std::vector<double>>(std::move(weight));
  }
  if (bias) take_values(cx, at, 2, "bias", op);
}

void translate_constant(OnnxContext& cx, const At& at) {
  if (at.node.output_size() != 1) at.refuse("a Constant has one output");
  OnnxTensor t;
  if (const auto* a = find_attribute(at.node, "value")) {
    t = read_onnx_tensor(a->t(), cx.file, onnx_node_label(at.node, at.index) + ".value");
  } else if (const auto* fs = find_attribute(at.node, "value_floats")) {
    t.dims = {fs->floats_size()};
    t.values = std::vector<double>(fs->floats().begin(), fs->floats().end());
  } else if (const auto* is = find_attribute(at.node, "value_ints")) {
    t.dims = {is->ints_size()};
    t.values = std::vector<double>();
    for (const int64_t v : is->ints()) t.values->push_back(static_cast<double>(v));
  } else if (const auto* f1 = find_attribute(at.node, "value_float")) {
    t.values = std::vector<double>{f1->f()};
  } else if (const auto* i1 = find_attribute(at.node, "value_int")) {
    t.values = std::vector<double>{static_cast<double>(i1->i())};
  } else {
    at.refuse("a Constant of a kind convbench does not read (sparse or string)");
  }
  if (t.values && static_cast<int64_t>(t.values->size()) > kSmallTensor) t.values.reset();
  cx.constants[at.node.output(0)] = std::move(t);
}

// "(2, 3)"
std::string axes_text(const std::vector<int64_t>& axes) {
  std::vector<std::string> parts;
  for (const int64_t a : axes) parts.push_back(std::to_string(a));
  return "(" + join(parts, ", ") + ")";
}

// ReduceMean over every spatial dim: x.mean((2, 3), keepdim=True) (timm's squeeze-excitation),
// and how PyTorch's default exporter writes nn.AdaptiveAvgPool2d(1) (torchvision's): one
// global_avg_pool. The axes are an attribute until opset 18, an input from it.
void translate_reduce_mean(OnnxContext& cx, const At& at) {
  const std::string x = data_input(at, 0);
  std::optional<std::vector<int64_t>> axes = ints_attribute(at.node, "axes");
  if (has_input(at.node, 1)) axes = integers(at, constant_input(at, 1, "the axes"), "the axes");
  const int rank = cx.dims + 2;
  std::vector<int64_t> got;
  for (int64_t a : axes.value_or(std::vector<int64_t>{})) {
    if (a < -rank || a >= rank)
      at.refuse("axis " + std::to_string(a) + " of a rank-" + std::to_string(rank) + " value");
    got.push_back(a < 0 ? a + rank : a);
  }
  std::sort(got.begin(), got.end());
  std::vector<int64_t> spatial;
  for (int64_t a = 2; a < rank; ++a) spatial.push_back(a);
  if (got != spatial)
    at.refuse("a mean over axes " + (axes ? axes_text(*axes) : std::string("(all)")) +
              ": convbench reads a mean over every spatial dim (its global_avg_pool), axes " + axes_text(spatial));
  // keepdims 0 (ShuffleNetV2's head, x.mean([2, 3])): N x C, which the classifier's Gemm reads as
  // convbench's linear reads the pool's N x C x 1 x ... (as a Flatten would give it).
  add_op(cx, at, "global_avg_pool", op_name(cx, at.node, at.index, ""), {x}, {}, channels_of(cx, x));
}

// A Mul of a value by a constant of one value per channel: ConvNeXt's `layer_scale * x` (timm's
// LayerScale2d), the layer_scale op whose weight is the constant. False when neither operand is a
// constant; any other constant is refused (convbench has no op that multiplies by a fixed tensor).
bool take_layer_scale(OnnxContext& cx, const At& at) {
  if (at.node.input_size() != 2) return false;
  const int k = is_constant_input(at, 0) ? 0 : is_constant_input(at, 1) ? 1 : -1;
  if (k < 0) return false;
  const std::string x = data_input(at, 1 - k);
  const auto channels = channels_of(cx, x);
  if (!channels || !is_per_channel_constant(at, k, *channels))
    at.refuse("a Mul by the constant \"" + printable(at.node.input(k)) +
              "\", which is not one value per channel of its other operand: convbench reads a product with a "
              "constant as a per-channel layer_scale (C x 1 x ...)");
  ImportedOp& op =
      add_op(cx, at, "layer_scale", op_name(cx, at.node, at.index, stored_name(at, k) + ".weight"), {x}, {}, channels);
  take_values(cx, at, k, "weight", op);
  return true;
}

}  // namespace

namespace {

// nn.SiLU as PyTorch exports it: a Mul of x and Sigmoid(x), where nothing else reads the
// Sigmoid's output. The sigmoid op already translated becomes one silu (what backward saves
// differs: silu keeps its input, sigmoid and mul their operands), and the Mul names its value.
bool take_silu(OnnxContext& cx, const At& at) {
  if (at.node.input_size() != 2) return false;
  for (int k = 0; k < 2; ++k) {
    const std::string& gate = at.node.input(k);
    const std::string& other = at.node.input(1 - k);
    const auto gate_value = cx.values.find(gate), other_value = cx.values.find(other);
    if (gate_value == cx.values.end() || other_value == cx.values.end()) continue;
    const auto uses = cx.uses.find(gate);
    if (uses == cx.uses.end() || uses->second != 1) continue;
    // The gate's producer, from the newest op back (nearly always the one just added), stopping
    // there: op names are unique.
    for (auto op = cx.ops.rbegin(); op != cx.ops.rend(); ++op) {
      if (op->name != gate_value->second) continue;
      if (op->op != "sigmoid" || op->inputs.size() != 1 || op->inputs[0] != other_value->second) break;
      op->op = "silu";
      op->node += " and " + onnx_node_label(at.node, at.index);
      cx.values[at.node.output(0)] = op->name;
      return true;
    }
  }
  return false;
}

// Clip with constant bounds 0 and 6 is nn.ReLU6 as PyTorch exports it (opset 11 on: the bounds
// are inputs; before, attributes). Other bounds are no convbench op.
void translate_clip(OnnxContext& cx, const At& at) {
  const std::string x = data_input(at, 0);
  auto bound = [&](int k, const char* attribute, const char* what) -> std::optional<double> {
    if (cx.opset < 11) {
      if (!find_attribute(at.node, attribute)) return std::nullopt;
      return float_attribute(at.node, attribute, 0.0);
    }
    if (!has_input(at.node, k)) return std::nullopt;
    return one_number(at, k, what);
  };
  const std::optional<double> low = bound(1, "min", "the lower bound"), high = bound(2, "max", "the upper bound");
  if (low != 0.0 || high != 6.0)
    at.refuse("a Clip to [" + (low ? std::to_string(*low) : std::string("-inf")) + ", " +
              (high ? std::to_string(*high) : std::string("inf")) + "]: convbench reads Clip to [0, 6] (relu6) only");
  add_op(cx, at, "relu6", op_name(cx, at.node, at.index, ""), {x}, {}, channels_of(cx, x));
}

}  // namespace

namespace {

void translate_node_kind(const onnx::NodeProto& node, int index, OnnxContext& cx);

// A node's attributes as an op's definition reads them (OpDefinition::onnx_import), refused at the node.
class NodeAttributes final : public OnnxNodeAttributes {
 public:
  explicit NodeAttributes(const onnx_reading::At& at) : at_(at) {}
  double number(const std::string& name, double fallback) const override {
    return onnx_reading::float_attribute(at_.node, name, fallback);
  }
  std::string text(const std::string& name, const std::string& fallback) const override {
    return onnx_reading::string_attribute(at_.node, name, fallback);
  }
  [[noreturn]] void refuse(const std::string& why) const override { at_.refuse(why); }

 private:
  const onnx_reading::At& at_;
};

// The pointwise operators convbench reads on a channels-last view: every activation an op's
// definition imports one-to-one, and the arithmetic and identities of the patterns it reads there.
const std::set<std::string>& channels_last_pointwise() {
  static const std::set<std::string> pointwise = [] {
    std::set<std::string> s = {"Clip", "Dropout", "Identity", "Add", "Sub", "Mul", "Div", "Erf"};
    for (const OpDefinition* d : op_definitions())
      if (d->onnx_import && d->traits->activation) s.insert(std::string(d->onnx_import->node));
    return s;
  }();
  return pointwise;
}

}  // namespace

void translate_onnx_node(const onnx::NodeProto& node, int index, OnnxContext& cx) {
  using namespace onnx_reading;
  const At at{cx, node, index};
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    at.refuse("domain \"" + printable(node.domain()) + "\": convbench reads the standard operators only");
  const std::string& type = node.op_type();
  if (node.output_size() < 1 || node.output(0).empty()) at.refuse("has no output");
  for (const std::string& out : node.output())
    if (!out.empty() && (cx.values.count(out) || cx.constants.count(out)))
      at.refuse("its output \"" + printable(out) + "\" is produced twice");
  // A channels-last view (after ConvNeXt's Transpose): its own reading (onnx_channels_last.cpp),
  // and only pointwise ops besides, whose outputs are channels-last views too.
  const bool channels_last = reads_channels_last(at);
  if (translate_channels_last(cx, at, type)) return;
  if (channels_last) {
    if (!channels_last_pointwise().count(type))
      at.refuse("a " + type +
                " of a channels-last view (a Transpose to N x spatial x C): convbench reads there pointwise ops, "
                "LayerNormalization over the last axis, MatMul by a weight and its bias, and the Transpose back");
  }
  translate_node_kind(node, index, cx);
  if (channels_last)
    for (const std::string& out : node.output())
      if (cx.values.count(out)) cx.channels_last.insert(out);
}

namespace {

void translate_node_kind(const onnx::NodeProto& node, int index, OnnxContext& cx) {
  using namespace onnx_reading;
  const At at{cx, node, index};
  const std::string& type = node.op_type();
  auto unary = [&](const std::string& op, OpFieldValues f = {}) {
    const std::string x = data_input(at, 0);
    add_op(cx, at, op, op_name(cx, node, index, ""), {x}, std::move(f), channels_of(cx, x));
  };
  if (type == "Gather" && translate_strided_view(cx, at)) {
    // as_strided's view of a pooled value (onnx_strided_view.cpp)
  } else if ((type == "Add" || type == "Sub" || type == "Mul" || type == "Div" || type == "Concat" ||
              type == "Gather" || type == "ConstantOfShape" || type == "Cast") &&
             translate_shape_arithmetic(cx, at, type)) {
    // shape arithmetic (onnx_shape_arithmetic.cpp)
  } else if ((type == "Div" || type == "Mul" || type == "Erf" || type == "Add") && translate_gelu_erf(cx, at, type)) {
    // nn.GELU's erf form (onnx_gelu.cpp)
  } else if (type == "Erf") {
    at.refuse("convbench reads Erf only in GELU's erf form (Div by sqrt(2), Erf, Add 1, Mul by x and by 1/2)");
  } else if (type == "Transpose" && translate_shuffle_transpose(cx, at)) {
    // ShuffleNet's channel shuffle (onnx_channel_shuffle.cpp)
  } else if (type == "Transpose") {
    at.refuse(
        "a Transpose convbench reads only to channels-last and back (ConvNeXt's permute), of a Linear's "
        "weight, or of ShuffleNet's channel groups");
  } else if (type == "Split") {
    translate_split(cx, at);
  } else if (type == "Conv" || type == "ConvTranspose") {
    translate_conv(cx, at, type == "ConvTranspose");
  } else if (type == "InstanceNormalization" && translate_grouped_instance_norm(cx, at)) {
    // PyTorch's group norm (onnx_group_norm.cpp)
  } else if (type == "BatchNormalization" || type == "InstanceNormalization" || type == "GroupNormalization") {
    translate_norm(cx, at, type);
  } else if (type == "Reshape") {
    translate_reshape(cx, at);
  } else if (type == "Shape") {
    translate_shape(cx, at);
  } else if (type == "Unsqueeze") {
    translate_unsqueeze(cx, at);
  } else if (const OpDefinition* d = find_onnx_import(type)) {
    // One node, one op, as the op's definition says (Relu, LeakyRelu, Sigmoid, GlobalAveragePool, ...).
    const NodeAttributes attributes(at);
    unary(std::string(d->name), d->onnx_import->fields ? d->onnx_import->fields(attributes) : OpFieldValues{});
  } else if (type == "Clip") {
    translate_clip(cx, at);
  } else if ((type == "RandomUniformLike" || type == "Less" || type == "Cast" || type == "Div" || type == "Mul") &&
             translate_stochastic_depth(cx, at, type)) {
    // torchvision's stochastic depth (onnx_stochastic_depth.cpp)
  } else if (type == "RandomUniformLike" || type == "Less" || type == "Cast" || type == "Div") {
    at.refuse("convbench reads " + type +
              " only as a step of torchvision's stochastic depth (RandomUniformLike, Less, Cast, Div, Mul)");
  } else if (type == "Mul" && take_silu(cx, at)) {
    // nn.SiLU (take_silu)
  } else if ((type == "Mul" || type == "Add") && take_norm_affine(cx, at, type)) {
    // a group norm's weight or bias (onnx_group_norm.cpp)
  } else if (type == "Mul" && take_layer_scale(cx, at)) {
    // ConvNeXt's layer scale
  } else if (type == "Add" || type == "Sub" || type == "Mul") {
    std::string a = data_input(at, 0), b = data_input(at, 1);
    // convbench's mul broadcasts its second operand over space; ONNX's Mul either (torchvision's
    // squeeze-excitation writes `scale * input`): a product is the same either way round.
    if (type == "Mul" && cx.spatial_one.count(a) && !cx.spatial_one.count(b)) std::swap(a, b);
    std::string op = type == "Add" ? "add" : type == "Sub" ? "sub" : "mul";
    add_op(cx, at, op, op_name(cx, node, index, ""), {a, b}, {}, channels_of(cx, a));
  } else if (type == "Concat") {
    const int64_t axis = int_attribute(node, "axis", 1);
    if (axis != 1 && axis != 1 - (spatial_dims(at) + 2)) at.refuse("concatenation along an axis other than channels");
    std::vector<std::string> in;
    std::optional<int64_t> c = 0;
    for (int k = 0; k < node.input_size(); ++k) {
      in.push_back(data_input(at, k));
      const auto ck = channels_of(cx, in.back());
      c = c && ck ? std::optional<int64_t>(*c + *ck) : std::nullopt;
    }
    if (in.empty()) at.refuse("a Concat of no inputs");
    if (in.size() == 1) {
      // torch.cat([x], 1) (torchvision's DenseNet layer on its first input): the same values. PyTorch
      // copies them, and a module that saves the copy keeps its bytes besides the input's; convbench
      // reads the one value (configs/README.md names this difference).
      cx.values[node.output(0)] = in[0];
      return;
    }
    add_op(cx, at, "concat", op_name(cx, node, index, ""), std::move(in), {}, c);
  } else if (type == "Slice") {
    translate_slice(cx, at);
  } else if (type == "MaxPool" || type == "AveragePool") {
    if (node.output_size() > 1 && !node.output(1).empty()) at.refuse("MaxPool's indices output");
    const auto kernel = ints_attribute(node, "kernel_shape");
    if (!kernel || static_cast<int>(kernel->size()) != spatial_dims(at))
      at.refuse("kernel_shape missing or of another rank");
    OpFieldValues f;
    window_fields(at, *kernel, f, true);
    if (type == "AveragePool" && int_attribute(node, "count_include_pad", 0) == 0 &&
        f.get<std::vector<int64_t>>("padding") != std::vector<int64_t>(kernel->size(), 0))
      at.refuse("padded average pooling without count_include_pad: convbench's counts the padding (PyTorch's default)");
    unary(type == "MaxPool" ? "max_pool" : "avg_pool", std::move(f));
  } else if (type == "ReduceMean") {
    translate_reduce_mean(cx, at);
  } else if (type == "Resize" || type == "Upsample") {
    translate_resize(cx, at, type);
  } else if (type == "Dropout") {
    double p = float_attribute(node, "ratio", 0.5);
    if (cx.opset >= 12 && has_input(node, 1)) {
      constant_input(at, 1, "the ratio");
      const auto ratio = scalar_constant(at, 1);
      if (!ratio) at.refuse("a ratio that is not one number");
      p = *ratio;
    }
    if (!(p >= 0 && p < 1)) at.refuse("a ratio outside [0, 1)");
    if (p == 0) {  // nn.Dropout(0.0) (timm's Mlp by default): PyTorch returns its input, keeping nothing
      cx.values[node.output(0)] = data_input(at, 0);
      return;
    }
    OpFieldValues f;
    f.set("p", p);
    unary("dropout", std::move(f));
  } else if (type == "Identity" && is_constant_input(at, 0)) {
    // A constant under another name (the TorchScript exporter's eval-mode files share a weight so).
    cx.constants[node.output(0)] = cx.constants.at(node.input(0));
  } else if (type == "Identity" || type == "Flatten") {
    if (type == "Flatten" && int_attribute(node, "axis", 1) != 1) at.refuse("Flatten on an axis other than 1");
    cx.values[node.output(0)] = data_input(at, 0);  // no op: the same value under another name
  } else if (type == "Gemm" || type == "MatMul") {
    translate_linear(cx, at, type);
  } else if (type == "SpaceToDepth") {
    OpFieldValues f;
    const int64_t block = field_size(at, int_attribute(node, "blocksize", 0), "blocksize");
    f.set("block_size", block);
    f.set("order", FieldKeyword{"block_major"});  // ONNX's order: (row offset, column offset, channel)
    const std::string x = data_input(at, 0);
    const auto c = channels_of(cx, x);
    const int64_t factor = block_volume(at, block);
    // The channels it makes: C x blocksize^dims, refused at the node when past 2^31 (as every
    // size a spec takes) rather than wrapped round into a count some later check misreads.
    if (c && *c > (int64_t{1} << 31) / factor)
      at.refuse("blocksize " + std::to_string(block) + " makes " + std::to_string(*c) + " x " + std::to_string(factor) +
                " channels, more than the 2^31 convbench takes");
    add_op(cx, at, "space_to_depth", op_name(cx, node, index, ""), {x}, std::move(f),
           c ? std::optional<int64_t>(*c * factor) : std::nullopt);
  } else if (type == "DepthToSpace") {
    OpFieldValues f;
    const int64_t block = field_size(at, int_attribute(node, "blocksize", 0), "blocksize");
    const std::string mode = string_attribute(node, "mode", "DCR");
    if (mode != "DCR" && mode != "CRD") at.refuse("mode \"" + printable(mode) + "\": ONNX's modes are DCR and CRD");
    f.set("block_size", block);
    // DCR reads channel offset * C + c (block-major); CRD c * b^d + offset (pixel_shuffle's).
    f.set("order", FieldKeyword{mode == "DCR" ? "block_major" : "channel_major"});
    const std::string x = data_input(at, 0);
    const auto c = channels_of(cx, x);
    const int64_t factor = block_volume(at, block);
    if (c && *c % factor != 0)
      at.refuse("blocksize " + std::to_string(block) + ": its input's " + std::to_string(*c) +
                " channels are not a multiple of " + std::to_string(factor) + " (blocksize^" +
                std::to_string(spatial_dims(at)) + ")");
    add_op(cx, at, "depth_to_space", op_name(cx, node, index, ""), {x}, std::move(f),
           c ? std::optional<int64_t>(*c / factor) : std::nullopt);
  } else if (type == "Constant") {
    translate_constant(cx, at);
  } else {
    at.refuse("not an operator convbench translates; it reads " + join(supported_onnx_operators(), ", "));
  }
}

}  // namespace
}  // namespace convbench

// PyTorch's nn.GroupNorm as torch.onnx.export writes it at every opset (it does not use
// GroupNormalization): the input reshaped to (N, G, -1), InstanceNormalization over it with a
// unit scale and zero shift of G values (constants), reshaped back to the input's Shape, then
// multiplied by the weight and shifted by the bias, each Unsqueezed to (C, 1, ...). Read here as
// the one group_norm op it is, whose weight and bias are the Mul's and the Add's constants. Any
// other use of Reshape, Shape or Unsqueeze is refused: convbench's values are N x C x spatial.
#include <algorithm>

#include "onnx/onnx_node_reading.hpp"
#include "util/markup_escape.hpp"

namespace convbench::onnx_reading {
namespace {

// "/gn/InstanceNormalization" (PyTorch's) or "gn/InstanceNormalization" (convbench's export) ->
// "gn.weight": the op takes the module's name, as the ops named after their weights do.
std::string module_weight_name(const Node& node) {
  const std::string n = !node.name().empty() && node.name()[0] == '/' ? node.name().substr(1) : node.name();
  const size_t last = n.rfind('/');
  if (last == 0 || last == std::string::npos) return "";
  std::string module = n.substr(0, last);
  std::replace(module.begin(), module.end(), '/', '.');
  return module + ".weight";
}

// Per-group values (G) as per-channel ones (C): channel c takes group c / (C / G)'s.
GivenValues spread(const GivenValues& groups, int64_t channels) {
  std::vector<double> v;
  const auto g = static_cast<int64_t>(groups->size());
  for (int64_t c = 0; c < channels; ++c) v.push_back(groups->at(static_cast<size_t>(c / (channels / g))));
  return std::make_shared<const std::vector<double>>(std::move(v));
}

}  // namespace

ImportedOp* op_named(OnnxContext& cx, const std::string& name) {
  for (auto it = cx.ops.rbegin(); it != cx.ops.rend(); ++it)
    if (it->name == name) return &*it;
  return nullptr;
}

void translate_shape(OnnxContext& cx, const At& at) {
  const std::string x = data_input(at, 0);
  // As a vector of dims (onnx_shape_arithmetic.cpp): the batch, the channels where known, and
  // the spatial dims (not followed through the nodes: unknown), from start to end (opset 15).
  using Dim = OnnxContext::ShapeDim;
  std::vector<Dim> dims = {{Dim::Kind::batch, 0}};
  const auto channels = channels_of(cx, x);
  dims.push_back(channels ? Dim{Dim::Kind::number, *channels} : Dim{});
  for (int d = 0; d < cx.dims; ++d) dims.push_back(Dim{});
  const auto rank = static_cast<int64_t>(dims.size());
  const auto clamp = [&](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t{0}, rank); };
  const int64_t start = clamp(int_attribute(at.node, "start", 0)), end = clamp(int_attribute(at.node, "end", rank));
  cx.shapes[at.node.output(0)] = {std::vector<Dim>(dims.begin() + start, dims.begin() + std::max(start, end)), false};
  if (start == 0 && end == rank) cx.shape_of[at.node.output(0)] = x;  // the way back of a group norm
}

void translate_unsqueeze(OnnxContext& cx, const At& at) {
  if (translate_shape_arithmetic(cx, at, "Unsqueeze")) return;
  if (!is_constant_input(at, 0))
    at.refuse("an Unsqueeze of a computed value: convbench reads Unsqueeze only of a group norm's weight or bias");
  OnnxTensor t = constant_input(at, 0, "the tensor");
  std::vector<int64_t> axes;
  if (has_input(at.node, 1))
    axes = integers(at, constant_input(at, 1, "the axes"), "the axes");
  else
    axes = ints_attribute(at.node, "axes").value_or(std::vector<int64_t>{});
  const auto rank = static_cast<int64_t>(t.dims.size() + axes.size());
  if (axes.empty() || rank > 8) at.refuse("no axes, or more than 8 dims");
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) at.refuse("an axis outside the result's dims");
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) at.refuse("an axis given twice");
  for (const int64_t a : axes) t.dims.insert(t.dims.begin() + a, 1);  // ascending: each at its final place
  if (t.values && static_cast<int64_t>(t.values->size()) != t.elements()) at.refuse("values and dims disagree");
  cx.constants[at.node.output(0)] = std::move(t);
}

void translate_reshape(OnnxContext& cx, const At& at) {
  if (is_constant_input(at, 0)) {
    // A constant reshaped (timm's ConvNeXt: gamma.reshape(1, -1, 1, 1)): the same values, other dims.
    OnnxTensor t = constant_input(at, 0, "the tensor");
    std::vector<int64_t> dims = known_integers(at, 1, "the shape");
    int64_t known = 1, inferred = -1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 0 && i < t.dims.size() && int_attribute(at.node, "allowzero", 0) == 0) dims[i] = t.dims[i];
      if (dims[i] == -1) {
        if (inferred >= 0) at.refuse("a shape with two -1");
        inferred = static_cast<int64_t>(i);
      } else if (dims[i] < 1 || __builtin_mul_overflow(known, dims[i], &known)) {
        at.refuse("a shape with a dim below 1 or a product past 64-bit integers");
      }
    }
    if (inferred >= 0) {
      if (t.elements() % known != 0) at.refuse("a shape that does not divide the constant's elements");
      dims[static_cast<size_t>(inferred)] = t.elements() / known;
    } else if (known != t.elements()) {
      at.refuse("a shape of another number of elements than the constant's");
    }
    t.dims = dims;
    cx.constants[at.node.output(0)] = std::move(t);
    return;
  }
  if (translate_shuffle_reshape(cx, at)) return;  // ShuffleNet's (onnx_channel_shuffle.cpp)
  if (translate_flat_view(cx, at)) return;        // ConvNeXt's head, default export (onnx_strided_view.cpp)
  // torch.flatten(x, 1) or x.view(N, -1) before a classifier, as the default exporter writes it:
  // a Reshape to N x -1 (or N x C), the same values as Flatten gives (convbench's linear flattens
  // its N x C x 1 x ... input itself).
  if (has_input(at.node, 0) && has_input(at.node, 1) && cx.values.count(at.node.input(0)) &&
      !cx.channels_last.count(at.node.input(0))) {
    using Dim = OnnxContext::ShapeDim;
    const auto to = shape_dims_input(at, 1, "the shape");
    const auto channels = channels_of(cx, cx.values.at(at.node.input(0)));
    if (to.size() == 2 && to[0].kind != Dim::Kind::unknown && to[1].kind == Dim::Kind::number &&
        (to[1].value == -1 || (channels && to[1].value == *channels))) {
      cx.values[at.node.output(0)] = cx.values.at(at.node.input(0));
      return;
    }
  }
  const std::string why =
      "a Reshape convbench reads only as part of PyTorch's group norm (to N x groups x -1, then back to its "
      "input's Shape) or of ShuffleNet's channel shuffle (to N x g x C/g x spatial, transposed, and back): its "
      "ops keep N x C x spatial";
  if (!has_input(at.node, 1)) at.refuse(why);
  // The way back: the normalised groups, reshaped to the Shape of the norm's own input.
  if (const auto shape = cx.shape_of.find(at.node.input(1)); shape != cx.shape_of.end()) {
    const auto norm = cx.grouped_norms.find(at.node.input(0));
    if (norm == cx.grouped_norms.end()) at.refuse(why);
    const ImportedOp* op = op_named(cx, norm->second.value);
    if (!op || op->inputs.at(0) != shape->second)
      at.refuse("reshapes the normalised groups to the shape of another value than the norm's input");
    cx.values[at.node.output(0)] = norm->second.value;
    return;
  }
  const std::string x = data_input(at, 0);
  const std::vector<int64_t> to = integers(at, constant_input(at, 1, "the shape"), "the shape");
  const auto channels = channels_of(cx, x);
  if (to.size() != 3 || to[0] != 0 || to[1] < 1 || to[2] != -1 || int_attribute(at.node, "allowzero", 0) != 0 ||
      !channels || *channels % to[1] != 0)
    at.refuse(why);
  cx.grouped[at.node.output(0)] = {x, to[1]};
}

bool translate_grouped_instance_norm(OnnxContext& cx, const At& at) {
  const auto view = has_input(at.node, 0) ? cx.grouped.find(at.node.input(0)) : cx.grouped.end();
  if (view == cx.grouped.end()) return false;
  const int64_t groups = view->second.groups;
  for (int k : {1, 2})
    if (constant_input(at, k, k == 1 ? "the scale" : "the bias").dims != std::vector<int64_t>{groups})
      at.refuse("a scale or bias that is not one value per group");
  const int64_t channels = *channels_of(cx, view->second.value);  // translate_reshape checked it is known
  OpFieldValues f;
  f.set("norm_groups", groups);
  take_norm_constants(at, false, f);
  ImportedOp& op = add_op(cx, at, "group_norm", op_name(cx, at.node, at.index, module_weight_name(at.node)),
                          {view->second.value}, std::move(f), channels);
  take_values(cx, at, 1, "weight", op);
  take_values(cx, at, 2, "bias", op);
  for (const char* suffix : {"weight", "bias"}) {
    hold_onnx_values(cx, channels, onnx_node_label(at.node, at.index));
    op.values[suffix] = spread(op.values[suffix], channels);
  }
  // Its output is in groups until the Reshape back: no other node may read it as a value.
  cx.values.erase(at.node.output(0));
  cx.grouped_norms[at.node.output(0)] = {op.name, groups};
  cx.open_affine.insert(op.name);
  return true;
}

bool take_norm_affine(OnnxContext& cx, const At& at, const std::string& type) {
  if (at.node.input_size() != 2) return false;
  const int k = is_constant_input(at, 1) ? 1 : is_constant_input(at, 0) ? 0 : -1;
  if (k < 0 || is_constant_input(at, 1 - k)) return false;
  const std::string& operand = at.node.input(1 - k);
  const auto value = cx.values.find(operand);
  if (value == cx.values.end() || !cx.open_affine.count(value->second) || cx.uses[operand] != 1) return false;
  ImportedOp* op = op_named(cx, value->second);
  const int64_t channels = *channels_of(cx, value->second);
  if (!is_per_channel_constant(at, k, channels)) return false;
  const OnnxTensor& c = constant_input(at, k, "the constant");
  const std::string where =
      onnx_node_label(at.node, at.index) + ".input[" + std::to_string(k) + "] (" + printable(at.node.input(k)) + ")";
  const GivenValues m = read_onnx_values(cx, c, where);
  std::vector<double> weight = *op->values.at("weight"), bias = *op->values.at("bias");
  for (size_t i = 0; i < weight.size(); ++i) {
    if (type == "Mul") {  // (w x + b) m = (w m) x + b m
      weight[i] *= m->at(i);
      bias[i] *= m->at(i);
    } else {  // (w x + b) + a
      bias[i] += m->at(i);
    }
  }
  op->values["weight"] = std::make_shared<const std::vector<double>>(std::move(weight));
  op->values["bias"] = std::make_shared<const std::vector<double>>(std::move(bias));
  cx.values[at.node.output(0)] = op->name;
  return true;
}

}  // namespace convbench::onnx_reading

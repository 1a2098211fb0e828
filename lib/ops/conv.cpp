// conv and conv_transpose: weight (and bias) parameters; backward reads the input; MACs
// N x Cout x Cin/groups x K x P, with P the output's spatial size, or the input's for a
// transposed conv (each input point meets the whole kernel).
//
// A frozen conv (TResNet's anti-alias blur) keeps its weight and bias as buffers: they are not
// trained, so backward computes no weight or bias gradient (backward-weight work 0), and the conv
// is recorded for backward only when its input needs a gradient (then it saves its input, as
// PyTorch's convolution does whenever it records). init: blur fills the weight with the
// normalised binomial filter, for depthwise convs (one filter per channel).
#include <algorithm>
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

void check_conv_windows(const std::string& name, const ConvAttrs& a, int dims) {
  check_window(name, a.kernel, dims, "kernel", 1);
  check_window(name, a.stride, dims, "stride", 1);
  check_window(name, a.padding, dims, "padding", 0);
  check_window(name, a.dilation, dims, "dilation", 1);
}

// The weight (its first two dims, then the kernel) and the bias; both initialised from
// fan_in = `fan_in_channels` x the kernel volume, as PyTorch does. The weight is stored in the
// layout ConvAttrs::weight_layout names.
void add_conv_params(OpShape& s, const ConvAttrs& a, std::vector<int64_t> weight_shape, int64_t fan_in_channels) {
  const int64_t k = count_product(a.kernel);  // a spec's 3-D kernel may overflow: CountOverflow
  weight_shape.insert(weight_shape.end(), a.kernel.begin(), a.kernel.end());
  const int64_t fan_in = checked_mul(fan_in_channels, k);
  s.params.push_back({"weight", std::move(weight_shape), fan_in});
  s.params.back().layout = a.weight_layout;
  if (a.bias) s.params.push_back({"bias", {a.out_channels}, fan_in});
}

// Both convs: the groups divide the input's and the output's channels.
void check_groups(const Op& op, int64_t in_channels) {
  const ConvAttrs& a = op.conv;
  require(a.groups >= 1, op.name, "groups must be >= 1");
  require(a.out_channels >= 1, op.name, "out_channels must be >= 1");
  require_at(in_channels % a.groups == 0, op.name, {"groups"},
             "the input's " + std::to_string(in_channels) + " channels are not divisible by groups " +
                 std::to_string(a.groups));
  require_at(
      a.out_channels % a.groups == 0, op.name, {"out_channels"},
      "out_channels " + std::to_string(a.out_channels) + " is not divisible by groups " + std::to_string(a.groups));
}

OpShape infer_conv(const Graph& graph, Op& op) {
  const std::string& name = op.name;
  const ConvAttrs& a = op.conv;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const int dims = in.spatial_rank();
  check_conv_windows(name, a, dims);
  check_groups(op, in.channels());
  op.conv.weight_layout = in.layout;
  OpShape s;
  s.output = in;
  s.output.shape[1] = a.out_channels;
  for (int i = 0; i < dims; ++i) {
    const size_t d = static_cast<size_t>(i);
    const int64_t k = a.kernel[d], p = a.padding[d], size = in.shape[d + 2];
    s.output.shape[d + 2] = window_output_size(size, k, a.stride[d], p, a.dilation[d]);
    require_at(s.output.shape[d + 2] > 0, name, {"kernel"},
               "the kernel spans " + std::to_string(a.dilation[d] * (k - 1) + 1) + " in dim " + std::to_string(i) +
                   " but the padded input is only " + std::to_string(size + 2 * p) + " (size " + std::to_string(size) +
                   " + 2 x padding " + std::to_string(p) + ")");
  }
  // Weight (Cout, Cin/groups, k...), fan_in Cin/groups x K.
  add_conv_params(s, a, {a.out_channels, in.channels() / a.groups}, in.channels() / a.groups);
  if (a.blur_init) {
    require_at(a.groups == in.channels(), name, {"init"},
               "the blur filter is one filter per channel: it needs groups: depthwise (groups " +
                   std::to_string(a.groups) + ", the input has " + std::to_string(in.channels()) + " channels)");
    s.params.at(0).init = ParamInit::blur;
    if (a.bias) s.params.at(1).init = ParamInit::zeros;
  }
  if (a.frozen) {  // the weight and bias become buffers, kept in the block's dtype
    std::swap(s.params, s.buffers);
    for (ParamDecl& b : s.buffers) b.statistics = false;
  }
  return s;
}

OpShape infer_conv_transpose(const Graph& graph, Op& op) {
  const std::string& name = op.name;
  ConvAttrs& a = op.conv;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const int dims = in.spatial_rank();
  check_conv_windows(name, a, dims);
  if (a.output_padding.empty()) a.output_padding.assign(static_cast<size_t>(dims), 0);
  const std::vector<int64_t>& opad = a.output_padding;
  check_window(name, opad, dims, "output_padding", 0);
  check_groups(op, in.channels());
  a.weight_layout = in.layout;
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d)
    require_at(opad[d] < std::max(a.stride[d], a.dilation[d]), name, {"output_padding"},
               "output_padding must be smaller than stride or dilation, got " + std::to_string(opad[d]) + " in dim " +
                   std::to_string(static_cast<int64_t>(d)));
  OpShape s;
  s.output = in;
  s.output.shape[1] = a.out_channels;
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d) {
    // (in - 1) x stride - 2 x padding + dilation x (kernel - 1) + output_padding + 1, checked: a
    // spec may state each term up to 2^31.
    int64_t size = 0;
    const bool overflow = __builtin_mul_overflow(in.shape[d + 2] - 1, a.stride[d], &size) ||
                          __builtin_add_overflow(size, a.dilation[d] * (a.kernel[d] - 1), &size) ||
                          __builtin_add_overflow(size, opad[d] + 1 - 2 * a.padding[d], &size);
    const std::string dim = std::to_string(static_cast<int64_t>(d));
    require_at(!overflow && size <= kMaxDimSize, name, {}, "the output size in dim " + dim + " is larger than 2^31");
    require_at(size > 0, name, {"padding"},
               "the output size in dim " + dim + " would be " + std::to_string(size) + "; padding " +
                   std::to_string(a.padding[d]) + " is too large");
    s.output.shape[d + 2] = size;
  }
  // PyTorch's ConvTranspose weight is (Cin, Cout/groups, k...) and its fan_in uses dim 1.
  add_conv_params(s, a, {in.channels(), a.out_channels / a.groups}, a.out_channels / a.groups);
  return s;
}

// A custom conv: out_channels defaults to the input's channels, the kernel to the block's,
// stride and dilation to 1, padding to "same" (dilation x (kernel - 1) / 2), bias to the block's,
// groups to 1 ("depthwise": one group per input channel).
void apply_conv_fields(const OpFieldValues& f, const FieldContext& c, Op& op) {
  ConvAttrs& a = op.conv;
  const std::vector<int64_t> ones(static_cast<size_t>(c.dims), 1);
  a.groups = f.is_keyword("groups", "depthwise") ? c.input_channels : f.get<int64_t>("groups").value_or(1);
  a.out_channels = f.get<int64_t>("out_channels").value_or(c.input_channels);
  a.kernel = f.get<std::vector<int64_t>>("kernel").value_or(c.block_kernel);
  a.stride = f.get<std::vector<int64_t>>("stride").value_or(ones);
  a.dilation = f.get<std::vector<int64_t>>("dilation").value_or(ones);
  if (auto padding = f.get<std::vector<int64_t>>("padding")) {
    a.padding = *padding;
  } else {  // "same", given or by default
    a.padding.assign(a.kernel.size(), 0);
    for (size_t d = 0; d < a.kernel.size() && d < a.dilation.size(); ++d)
      a.padding[d] = a.dilation[d] * (a.kernel[d] - 1) / 2;
  }
  a.output_padding = f.get<std::vector<int64_t>>("output_padding").value_or(std::vector<int64_t>{});
  a.bias = f.get<bool>("bias").value_or(c.block_bias);
  a.frozen = f.get<bool>("frozen").value_or(false);
  a.blur_init = f.is_keyword("init", "blur");
}

// A frozen conv's weight and bias are buffers; in the file both are initializers alike.
void conv_onnx(OnnxNodeWriter& w, const Op& op) {
  std::vector<std::string> weights;
  for (const int id : op.conv.frozen ? op.buffers : op.params)
    weights.push_back(op.conv.frozen ? onnx_export::buffer_tensor(w, id) : onnx_export::param_tensor(w, id));
  onnx_export::conv_nodes(w, op, op.conv, weights, op.kind == OpKind::conv_transpose);
}

OpDefinition conv_like(OpKind kind, std::vector<OpField> fields) {
  OpDefinition d;
  d.kind = kind;
  d.fields = std::move(fields);
  d.apply_fields = apply_conv_fields;
  d.saved = {{0}, false, {0}};
  d.infer = kind == OpKind::conv ? infer_conv : infer_conv_transpose;
  d.work = [kind](const WorkQuery& q) {
    const TensorDesc& in = q.graph.desc(q.op.inputs.at(0));
    const TensorDesc& out = q.graph.desc(q.op.output);
    const int64_t spatial = kind == OpKind::conv ? out.spatial_size() : in.spatial_size();
    const int64_t macs =
        checked_mul(checked_mul(checked_mul(checked_mul(in.batch(), out.channels()), in.channels() / q.op.conv.groups),
                                count_product(q.op.conv.kernel)),
                    spatial);
    const bool trained = !q.op.conv.frozen;  // a frozen conv computes no weight or bias gradient
    OpWork w;
    w.macs = {macs, q.input_requires_grad.at(0) ? macs : 0, trained ? macs : 0};
    if (q.op.conv.bias)
      w.elementwise = {q.output_elements(), 0, trained ? q.output_elements() : 0};  // add; gradient sum
    return w;
  };
  d.attributes = [kind](const Op& op) {
    const ConvAttrs& a = op.conv;
    nlohmann::ordered_json j = {{"out_channels", a.out_channels},
                                {"kernel", a.kernel},
                                {"stride", a.stride},
                                {"padding", a.padding},
                                {"dilation", a.dilation}};
    if (kind == OpKind::conv_transpose)
      j["output_padding"] = a.output_padding.empty() ? std::vector<int64_t>(a.kernel.size(), 0) : a.output_padding;
    j["groups"] = a.groups;
    j["bias"] = a.bias;
    // Only when set: a conv without them resolves as before, so plans' item ids stay the same.
    if (a.frozen) j["frozen"] = true;
    if (a.blur_init) j["init"] = "blur";
    return j;
  };
  // autocast: conv and conv_transpose are on both devices' lower-precision lists; input, weight
  // and bias cast down, the parameters' copies cached for the step.
  d.autocast = autocast_always(AutocastClass::lower);
  d.traits = OpTraits{};
  d.onnx_export = conv_onnx;
  return d;
}

const std::vector<OpField> kConvFields = {{"out_channels", FieldKind::positive_int},
                                          {"kernel", FieldKind::per_dim_positive},
                                          {"stride", FieldKind::per_dim_positive},
                                          {"padding", FieldKind::padding},
                                          {"dilation", FieldKind::per_dim_positive},
                                          {"groups", FieldKind::groups},
                                          {"bias", FieldKind::boolean}};

}  // namespace

OpDefinition define_conv() {
  std::vector<OpField> fields = kConvFields;
  fields.push_back({"frozen", FieldKind::boolean});
  fields.push_back({"init", FieldKind::keyword, {"default", "blur"}});
  OpDefinition d = conv_like(OpKind::conv, fields);
  d.peer_module = "nn.Conv2d";
  return d;
}

OpDefinition define_conv_transpose() {
  std::vector<OpField> fields = kConvFields;
  fields.push_back({"output_padding", FieldKind::per_dim_nonneg});
  OpDefinition d = conv_like(OpKind::conv_transpose, fields);
  d.peer_module = "nn.ConvTranspose2d";
  return d;
}

}  // namespace convbench

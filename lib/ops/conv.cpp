// conv and conv_transpose: weight (and bias) parameters; backward reads the input; MACs
// N x Cout x Cin/groups x K x P, with P the output's spatial size, or the input's for a
// transposed conv (each input point meets the whole kernel).
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
// fan_in = `fan_in_channels` x the kernel volume, as PyTorch does.
void add_conv_params(OpShape& s, const ConvAttrs& a, std::vector<int64_t> weight_shape, int64_t fan_in_channels) {
  int64_t k = 1;
  for (int64_t kd : a.kernel) k *= kd;
  weight_shape.insert(weight_shape.end(), a.kernel.begin(), a.kernel.end());
  const int64_t fan_in = fan_in_channels * k;
  s.params.push_back({"weight", std::move(weight_shape), fan_in});
  if (a.bias) s.params.push_back({"bias", {a.out_channels}, fan_in});
}

OpShape infer_conv(const Graph& graph, Op& op) {
  const std::string& name = op.name;
  const ConvAttrs& a = op.conv;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const int dims = in.spatial_rank();
  check_conv_windows(name, a, dims);
  require(a.groups >= 1, name, "groups must be >= 1");
  require(a.out_channels >= 1, name, "out_channels must be >= 1");
  require(in.channels() % a.groups == 0, name,
          "in_channels " + std::to_string(in.channels()) + " is not divisible by groups " + std::to_string(a.groups));
  require(a.out_channels % a.groups == 0, name,
          "out_channels " + std::to_string(a.out_channels) + " is not divisible by groups " + std::to_string(a.groups));
  OpShape s;
  s.output = in;
  s.output.shape[1] = a.out_channels;
  for (int i = 0; i < dims; ++i) {
    const size_t d = static_cast<size_t>(i);
    const int64_t span = a.dilation[d] * (a.kernel[d] - 1) + 1;
    require(span <= in.shape[d + 2] + 2 * a.padding[d], name,
            "kernel " + dims_string(a.kernel) + " (dilated extent " + std::to_string(span) +
                ") is larger than the padded input " + in.shape_string());
    s.output.shape[d + 2] = window_output_size(in.shape[d + 2], a.kernel[d], a.stride[d], a.padding[d], a.dilation[d]);
  }
  // Weight (Cout, Cin/groups, k...), fan_in Cin/groups x K.
  add_conv_params(s, a, {a.out_channels, in.channels() / a.groups}, in.channels() / a.groups);
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
  require(a.groups >= 1 && in.channels() % a.groups == 0 && a.out_channels % a.groups == 0, name,
          "in_channels " + std::to_string(in.channels()) + " and out_channels " + std::to_string(a.out_channels) +
              " must be divisible by groups " + std::to_string(a.groups));
  OpShape s;
  s.output = in;
  s.output.shape[1] = a.out_channels;
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d) {
    require(opad[d] < a.stride[d] || opad[d] < a.dilation[d], name,
            "output_padding must be smaller than stride or dilation");
    s.output.shape[d + 2] =
        (in.shape[d + 2] - 1) * a.stride[d] - 2 * a.padding[d] + a.dilation[d] * (a.kernel[d] - 1) + opad[d] + 1;
  }
  // PyTorch's ConvTranspose weight is (Cin, Cout/groups, k...) and its fan_in uses dim 1.
  add_conv_params(s, a, {in.channels(), a.out_channels / a.groups}, a.out_channels / a.groups);
  return s;
}

OpDefinition conv_like(OpKind kind, std::vector<std::string> fields) {
  OpDefinition d;
  d.kind = kind;
  d.spec_fields = std::move(fields);
  d.saved = {{0}, false};
  d.infer = kind == OpKind::conv ? infer_conv : infer_conv_transpose;
  d.work = [kind](const WorkQuery& q) {
    const TensorDesc& in = q.graph.desc(q.op.inputs.at(0));
    const TensorDesc& out = q.graph.desc(q.op.output);
    const int64_t spatial = kind == OpKind::conv ? out.spatial_size() : in.spatial_size();
    const int64_t macs =
        checked_mul(checked_mul(checked_mul(checked_mul(in.batch(), out.channels()), in.channels() / q.op.conv.groups),
                                count_product(q.op.conv.kernel)),
                    spatial);
    OpWork w;
    w.macs = {macs, q.input_requires_grad.at(0) ? macs : 0, macs};
    if (q.op.conv.bias) w.elementwise = {q.output_elements(), 0, q.output_elements()};  // add; gradient sum
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
    return j;
  };
  return d;
}

const std::vector<std::string> kConvFields = {"out_channels", "kernel", "stride", "padding",
                                              "dilation",     "groups", "bias"};

}  // namespace

OpDefinition define_conv() { return conv_like(OpKind::conv, kConvFields); }

OpDefinition define_conv_transpose() {
  std::vector<std::string> fields = kConvFields;
  fields.push_back("output_padding");
  return conv_like(OpKind::conv_transpose, fields);
}

}  // namespace convbench

#include "graph/graph_builder.hpp"

#include <set>

namespace convbench {
namespace {

std::string dims_string(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

void require(bool ok, const std::string& op_name, const std::string& message) {
  if (!ok) throw GraphError(op_name + ": " + message);
}

void check_window(const std::string& op, const std::vector<int64_t>& v, int dims, const char* what, int64_t min) {
  require(static_cast<int>(v.size()) == dims, op,
          std::string(what) + " needs " + std::to_string(dims) + " values, got " + std::to_string(v.size()));
  for (int64_t x : v)
    require(x >= min, op, std::string(what) + " must be >= " + std::to_string(min) + ", got " + std::to_string(x));
}

}  // namespace

int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + 2 * padding;
  if (span > padded) return 0;
  return (padded - span) / stride + 1;
}

GraphBuilder::GraphBuilder(std::string graph_name, const TensorDesc& input) {
  graph_.name = std::move(graph_name);
  require(input.rank() == 4 || input.rank() == 5, "input",
          "a block input must be 4-D or 5-D (N, C, spatial...), got " + input.shape_string());
  for (int64_t d : input.shape) require(d > 0, "input", "sizes must be positive, got " + input.shape_string());
  graph_.values.push_back({"input", input});
  graph_.input = 0;
}

void GraphBuilder::check_value(int v, const std::string& op_name) const {
  require(v >= 0 && v < static_cast<int>(graph_.values.size()), op_name, "unknown input value");
}

int GraphBuilder::add_op(Op op, const TensorDesc& out) {
  for (const Op& existing : graph_.ops) require(existing.name != op.name, op.name, "duplicate op name");
  for (int64_t d : out.shape) require(d > 0, op.name, "output shape " + out.shape_string() + " has an empty dimension");
  const int id = static_cast<int>(graph_.values.size());
  graph_.values.push_back({op.name, out});
  op.output = id;
  graph_.ops.push_back(std::move(op));
  return id;
}

int GraphBuilder::add_param(const std::string& name, std::vector<int64_t> shape, int op, int64_t fan_in,
                            ParamInit init) {
  const DType dt = graph_.values[0].desc.dtype;
  graph_.params.push_back({name, TensorDesc{std::move(shape), dt, Layout::channels_first}, op, fan_in, init});
  return static_cast<int>(graph_.params.size()) - 1;
}

int GraphBuilder::add_buffer(const std::string& name, std::vector<int64_t> shape, int op, ParamInit init) {
  const DType dt = stats_dtype(graph_.values[0].desc.dtype);
  graph_.buffers.push_back({name, TensorDesc{std::move(shape), dt, Layout::channels_first}, op, 1, init});
  return static_cast<int>(graph_.buffers.size()) - 1;
}

int GraphBuilder::conv(const std::string& name, int x, const ConvAttrs& a) {
  check_value(x, name);
  const TensorDesc& in = desc(x);
  const int dims = in.spatial_rank();
  check_window(name, a.kernel, dims, "kernel", 1);
  check_window(name, a.stride, dims, "stride", 1);
  check_window(name, a.padding, dims, "padding", 0);
  check_window(name, a.dilation, dims, "dilation", 1);
  require(a.groups >= 1, name, "groups must be >= 1");
  require(a.out_channels >= 1, name, "out_channels must be >= 1");
  require(in.channels() % a.groups == 0, name,
          "in_channels " + std::to_string(in.channels()) + " is not divisible by groups " + std::to_string(a.groups));
  require(a.out_channels % a.groups == 0, name,
          "out_channels " + std::to_string(a.out_channels) + " is not divisible by groups " + std::to_string(a.groups));
  TensorDesc out = in;
  out.shape[1] = a.out_channels;
  for (int i = 0; i < dims; ++i) {
    const size_t d = static_cast<size_t>(i);
    const int64_t span = a.dilation[d] * (a.kernel[d] - 1) + 1;
    require(span <= in.shape[d + 2] + 2 * a.padding[d], name,
            "kernel " + dims_string(a.kernel) + " (dilated extent " + std::to_string(span) +
                ") is larger than the padded input " + in.shape_string());
    out.shape[d + 2] = window_output_size(in.shape[d + 2], a.kernel[d], a.stride[d], a.padding[d], a.dilation[d]);
  }
  Op op;
  op.kind = OpKind::conv;
  op.name = name;
  op.inputs = {x};
  op.conv = a;
  const int op_id = static_cast<int>(graph_.ops.size());
  int64_t k = 1;
  for (int64_t kd : a.kernel) k *= kd;
  std::vector<int64_t> wshape = {a.out_channels, in.channels() / a.groups};
  wshape.insert(wshape.end(), a.kernel.begin(), a.kernel.end());
  const int64_t fan_in = in.channels() / a.groups * k;
  op.params.push_back(add_param(name + ".weight", wshape, op_id, fan_in));
  if (a.bias) op.params.push_back(add_param(name + ".bias", {a.out_channels}, op_id, fan_in));
  return add_op(std::move(op), out);
}

int GraphBuilder::conv_transpose(const std::string& name, int x, const ConvAttrs& a) {
  check_value(x, name);
  const TensorDesc& in = desc(x);
  const int dims = in.spatial_rank();
  check_window(name, a.kernel, dims, "kernel", 1);
  check_window(name, a.stride, dims, "stride", 1);
  check_window(name, a.padding, dims, "padding", 0);
  check_window(name, a.dilation, dims, "dilation", 1);
  std::vector<int64_t> opad =
      a.output_padding.empty() ? std::vector<int64_t>(static_cast<size_t>(dims), 0) : a.output_padding;
  check_window(name, opad, dims, "output_padding", 0);
  require(a.groups >= 1 && in.channels() % a.groups == 0 && a.out_channels % a.groups == 0, name,
          "in_channels " + std::to_string(in.channels()) + " and out_channels " + std::to_string(a.out_channels) +
              " must be divisible by groups " + std::to_string(a.groups));
  TensorDesc out = in;
  out.shape[1] = a.out_channels;
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d) {
    require(opad[d] < a.stride[d] || opad[d] < a.dilation[d], name,
            "output_padding must be smaller than stride or dilation");
    out.shape[d + 2] =
        (in.shape[d + 2] - 1) * a.stride[d] - 2 * a.padding[d] + a.dilation[d] * (a.kernel[d] - 1) + opad[d] + 1;
  }
  Op op;
  op.kind = OpKind::conv_transpose;
  op.name = name;
  op.inputs = {x};
  op.conv = a;
  op.conv.output_padding = opad;
  const int op_id = static_cast<int>(graph_.ops.size());
  int64_t k = 1;
  for (int64_t kd : a.kernel) k *= kd;
  // PyTorch's ConvTranspose weight is (Cin, Cout/groups, k...) and its fan_in uses dim 1.
  std::vector<int64_t> wshape = {in.channels(), a.out_channels / a.groups};
  wshape.insert(wshape.end(), a.kernel.begin(), a.kernel.end());
  const int64_t fan_in = a.out_channels / a.groups * k;
  op.params.push_back(add_param(name + ".weight", wshape, op_id, fan_in));
  if (a.bias) op.params.push_back(add_param(name + ".bias", {a.out_channels}, op_id, fan_in));
  return add_op(std::move(op), out);
}

int GraphBuilder::batch_norm(const std::string& name, int x, double eps, double momentum) {
  check_value(x, name);
  const int64_t c = desc(x).channels();
  Op op;
  op.kind = OpKind::batch_norm;
  op.name = name;
  op.inputs = {x};
  op.norm.eps = eps;
  op.norm.momentum = momentum;
  const int op_id = static_cast<int>(graph_.ops.size());
  op.params = {add_param(name + ".weight", {c}, op_id, 1, ParamInit::ones),
               add_param(name + ".bias", {c}, op_id, 1, ParamInit::zeros)};
  op.buffers = {add_buffer(name + ".running_mean", {c}, op_id, ParamInit::zeros),
                add_buffer(name + ".running_var", {c}, op_id, ParamInit::ones)};
  return add_op(std::move(op), desc(x));
}

int GraphBuilder::group_norm(const std::string& name, int x, int64_t groups, double eps) {
  check_value(x, name);
  const int64_t c = desc(x).channels();
  require(groups >= 1 && c % groups == 0, name,
          "channels " + std::to_string(c) + " are not divisible by norm_groups " + std::to_string(groups));
  Op op;
  op.kind = OpKind::group_norm;
  op.name = name;
  op.inputs = {x};
  op.norm.groups = groups;
  op.norm.eps = eps;
  const int op_id = static_cast<int>(graph_.ops.size());
  op.params = {add_param(name + ".weight", {c}, op_id, 1, ParamInit::ones),
               add_param(name + ".bias", {c}, op_id, 1, ParamInit::zeros)};
  return add_op(std::move(op), desc(x));
}

int GraphBuilder::relu(const std::string& name, int x) {
  check_value(x, name);
  Op op;
  op.kind = OpKind::relu;
  op.name = name;
  op.inputs = {x};
  return add_op(std::move(op), desc(x));
}

int GraphBuilder::leaky_relu(const std::string& name, int x, double negative_slope) {
  check_value(x, name);
  Op op;
  op.kind = OpKind::leaky_relu;
  op.name = name;
  op.inputs = {x};
  op.negative_slope = negative_slope;
  return add_op(std::move(op), desc(x));
}

int GraphBuilder::dropout(const std::string& name, int x, double p) {
  check_value(x, name);
  require(p >= 0.0 && p < 1.0, name, "dropout probability must be in [0, 1)");
  Op op;
  op.kind = OpKind::dropout;
  op.name = name;
  op.inputs = {x};
  op.dropout_p = p;
  return add_op(std::move(op), desc(x));
}

int GraphBuilder::add(const std::string& name, int a, int b) {
  check_value(a, name);
  check_value(b, name);
  require(desc(a).shape == desc(b).shape, name,
          "operands differ in shape: " + desc(a).shape_string() + " vs " + desc(b).shape_string());
  Op op;
  op.kind = OpKind::add;
  op.name = name;
  op.inputs = {a, b};
  return add_op(std::move(op), desc(a));
}

int GraphBuilder::sub(const std::string& name, int a, int b) {
  check_value(a, name);
  check_value(b, name);
  require(desc(a).shape == desc(b).shape, name,
          "operands differ in shape: " + desc(a).shape_string() + " vs " + desc(b).shape_string());
  Op op;
  op.kind = OpKind::sub;
  op.name = name;
  op.inputs = {a, b};
  return add_op(std::move(op), desc(a));
}

int GraphBuilder::concat(const std::string& name, const std::vector<int>& xs) {
  require(xs.size() >= 2, name, "concat needs at least two inputs");
  for (int v : xs) check_value(v, name);
  TensorDesc out = desc(xs[0]);
  out.shape[1] = 0;
  for (int v : xs) {
    const TensorDesc& d = desc(v);
    bool same = d.rank() == out.rank() && d.shape[0] == out.shape[0];
    for (int i = 2; same && i < d.rank(); ++i)
      same = d.shape[static_cast<size_t>(i)] == out.shape[static_cast<size_t>(i)];
    require(same, name,
            "inputs must agree in every dim but channels: " + desc(xs[0]).shape_string() + " vs " + d.shape_string());
    out.shape[1] += d.channels();
  }
  Op op;
  op.kind = OpKind::concat;
  op.name = name;
  op.inputs = xs;
  return add_op(std::move(op), out);
}

int GraphBuilder::max_pool(const std::string& name, int x, const PoolAttrs& a) {
  check_value(x, name);
  const TensorDesc& in = desc(x);
  const int dims = in.spatial_rank();
  check_window(name, a.kernel, dims, "kernel", 1);
  check_window(name, a.stride, dims, "stride", 1);
  check_window(name, a.padding, dims, "padding", 0);
  TensorDesc out = in;
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d) {
    require(a.padding[d] * 2 <= a.kernel[d], name, "padding must be at most half the kernel");
    require(a.kernel[d] <= in.shape[d + 2] + 2 * a.padding[d], name,
            "kernel " + dims_string(a.kernel) + " is larger than the padded input " + in.shape_string());
    out.shape[d + 2] = window_output_size(in.shape[d + 2], a.kernel[d], a.stride[d], a.padding[d], 1);
  }
  Op op;
  op.kind = OpKind::max_pool;
  op.name = name;
  op.inputs = {x};
  op.pool = a;
  return add_op(std::move(op), out);
}

int GraphBuilder::avg_pool(const std::string& name, int x, const PoolAttrs& a) {
  const int id = max_pool(name, x, a);  // same shape rules
  graph_.ops.back().kind = OpKind::avg_pool;
  return id;
}

int GraphBuilder::upsample(const std::string& name, int x, int64_t scale) {
  check_value(x, name);
  require(scale >= 1, name, "scale must be >= 1");
  TensorDesc out = desc(x);
  for (int i = 2; i < out.rank(); ++i) out.shape[static_cast<size_t>(i)] *= scale;
  Op op;
  op.kind = OpKind::upsample;
  op.name = name;
  op.inputs = {x};
  op.upsample_scale = scale;
  return add_op(std::move(op), out);
}

Graph GraphBuilder::finish(int output) {
  check_value(output, "output");
  require(output != graph_.input, "output", "the block output cannot be its input");
  graph_.output = output;
  // Every op must contribute to the output, or its work would be measured for nothing.
  std::vector<bool> live(graph_.values.size(), false);
  live[static_cast<size_t>(output)] = true;
  for (size_t i = graph_.ops.size(); i-- > 0;) {
    const Op& op = graph_.ops[i];
    if (!live[static_cast<size_t>(op.output)])
      throw GraphError(op.name + ": its result never reaches the block output");
    for (int v : op.inputs) live[static_cast<size_t>(v)] = true;
  }
  return std::move(graph_);
}

}  // namespace convbench

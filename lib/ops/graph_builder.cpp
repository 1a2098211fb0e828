#include "ops/graph_builder.hpp"

#include "ops/op_registry.hpp"

namespace convbench {

namespace {

Op make_op(OpKind kind, const std::string& name, std::vector<int> inputs) {
  Op op;
  op.kind = kind;
  op.name = name;
  op.inputs = std::move(inputs);
  return op;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string graph_name, const TensorDesc& input) {
  graph_.name = std::move(graph_name);
  require(input.rank() == 4 || input.rank() == 5, "input",
          "a block input must be 4-D or 5-D (N, C, spatial...), got " + input.shape_string());
  for (int64_t d : input.shape) require(d > 0, "input", "sizes must be positive, got " + input.shape_string());
  graph_.values.push_back({"input", input, false});
  graph_.input = 0;
}

void GraphBuilder::check_value(int v, const std::string& op_name) const {
  require(v >= 0 && v < static_cast<int>(graph_.values.size()), op_name, "unknown input value");
}

int GraphBuilder::add(Op op) {
  for (int v : op.inputs) check_value(v, op.name);
  const OpShape shape = op_definition(op.kind).infer(graph_, op);
  require(!names_.count(op.name), op.name, "duplicate op name");
  for (int64_t d : shape.output.shape)
    require(d > 0, op.name, "output shape " + shape.output.shape_string() + " has an empty dimension");
  const int op_id = static_cast<int>(graph_.ops.size());
  // Parameters in the block's dtype; running statistics in the statistics dtype, other buffers (a
  // frozen conv's weight) in the block's.
  const DType dtype = graph_.values[0].desc.dtype;
  for (const ParamDecl& p : shape.params) {
    graph_.params.push_back(
        {op.name + "." + p.suffix, TensorDesc{p.shape, dtype, p.layout}, op_id, p.fan_in, p.init, nullptr});
    op.params.push_back(static_cast<int>(graph_.params.size()) - 1);
  }
  for (const ParamDecl& b : shape.buffers) {
    graph_.buffers.push_back({op.name + "." + b.suffix,
                              TensorDesc{b.shape, b.statistics ? stats_dtype(dtype) : dtype, b.layout}, op_id, b.fan_in,
                              b.init, nullptr});
    op.buffers.push_back(static_cast<int>(graph_.buffers.size()) - 1);
  }
  const int id = static_cast<int>(graph_.values.size());
  names_.insert(op.name);
  // Graph::requires_grad()'s rule, for this op alone: a parameter, or an input that needs one.
  bool requires_grad = !op.params.empty();
  for (int v : op.inputs) requires_grad = requires_grad || graph_.values[static_cast<size_t>(v)].requires_grad;
  graph_.values.push_back({op.name, shape.output, requires_grad});
  op.output = id;
  graph_.ops.push_back(std::move(op));
  return id;
}

int GraphBuilder::add_from_fields(OpKind kind, const std::string& name, std::vector<int> inputs,
                                  const OpFieldValues& fields, const std::vector<int64_t>& block_kernel,
                                  bool block_bias) {
  Op op = make_op(kind, name, std::move(inputs));
  const OpDefinition& def = op_definition(kind);
  require(!op.inputs.empty(), name, "an op needs at least one input");
  if (def.apply_fields) {
    check_value(op.inputs.front(), name);
    const TensorDesc& first = desc(op.inputs.front());
    def.apply_fields(fields, FieldContext{first.spatial_rank(), first.channels(), block_kernel, block_bias}, op);
  }
  return add(std::move(op));
}

int GraphBuilder::conv(const std::string& name, int x, const ConvAttrs& attrs) {
  Op op = make_op(OpKind::conv, name, {x});
  op.conv = attrs;
  return add(std::move(op));
}

int GraphBuilder::conv_transpose(const std::string& name, int x, const ConvAttrs& attrs) {
  Op op = make_op(OpKind::conv_transpose, name, {x});
  op.conv = attrs;
  return add(std::move(op));
}

int GraphBuilder::linear(const std::string& name, int x, int64_t out_features, bool bias) {
  Op op = make_op(OpKind::linear, name, {x});
  op.linear.out_features = out_features;
  op.linear.bias = bias;
  return add(std::move(op));
}

int GraphBuilder::batch_norm(const std::string& name, int x, double eps, double momentum) {
  Op op = make_op(OpKind::batch_norm, name, {x});
  op.norm.eps = eps;
  op.norm.momentum = momentum;
  return add(std::move(op));
}

int GraphBuilder::batch_norm_act(const std::string& name, int x, double negative_slope, double eps, double momentum) {
  Op op = make_op(OpKind::batch_norm_act, name, {x});
  op.negative_slope = negative_slope;
  op.norm.eps = eps;
  op.norm.momentum = momentum;
  return add(std::move(op));
}

int GraphBuilder::group_norm(const std::string& name, int x, int64_t groups, double eps) {
  Op op = make_op(OpKind::group_norm, name, {x});
  op.norm.groups = groups;
  op.norm.eps = eps;
  return add(std::move(op));
}

int GraphBuilder::layer_norm(const std::string& name, int x, double eps) {
  Op op = make_op(OpKind::layer_norm, name, {x});
  op.norm.eps = eps;
  return add(std::move(op));
}

int GraphBuilder::layer_scale(const std::string& name, int x) { return add(make_op(OpKind::layer_scale, name, {x})); }

int GraphBuilder::channel_shuffle(const std::string& name, int x, int64_t groups) {
  Op op = make_op(OpKind::channel_shuffle, name, {x});
  op.shuffle_groups = groups;
  return add(std::move(op));
}

int GraphBuilder::relu(const std::string& name, int x) { return add(make_op(OpKind::relu, name, {x})); }

int GraphBuilder::activation(OpKind kind, const std::string& name, int x) {
  if (!op_traits(kind).activation)
    throw std::logic_error("GraphBuilder::activation: " + std::string(to_string(kind)) + " is no activation");
  return add(make_op(kind, name, {x}));
}

int GraphBuilder::leaky_relu(const std::string& name, int x, double negative_slope) {
  Op op = make_op(OpKind::leaky_relu, name, {x});
  op.negative_slope = negative_slope;
  return add(std::move(op));
}

int GraphBuilder::dropout(const std::string& name, int x, double p) {
  Op op = make_op(OpKind::dropout, name, {x});
  op.dropout_p = p;
  return add(std::move(op));
}

int GraphBuilder::channel_dropout(const std::string& name, int x, double p) {
  Op op = make_op(OpKind::channel_dropout, name, {x});
  op.dropout_p = p;
  return add(std::move(op));
}

int GraphBuilder::drop_path(const std::string& name, int x, double p) {
  Op op = make_op(OpKind::drop_path, name, {x});
  op.dropout_p = p;
  return add(std::move(op));
}

int GraphBuilder::add(const std::string& name, int a, int b) { return add(make_op(OpKind::add, name, {a, b})); }

int GraphBuilder::sub(const std::string& name, int a, int b) { return add(make_op(OpKind::sub, name, {a, b})); }

int GraphBuilder::concat(const std::string& name, const std::vector<int>& xs) {
  return add(make_op(OpKind::concat, name, xs));
}

int GraphBuilder::max_pool(const std::string& name, int x, const PoolAttrs& attrs) {
  Op op = make_op(OpKind::max_pool, name, {x});
  op.pool = attrs;
  return add(std::move(op));
}

int GraphBuilder::avg_pool(const std::string& name, int x, const PoolAttrs& attrs) {
  Op op = make_op(OpKind::avg_pool, name, {x});
  op.pool = attrs;
  return add(std::move(op));
}

int GraphBuilder::global_avg_pool(const std::string& name, int x) {
  return add(make_op(OpKind::global_avg_pool, name, {x}));
}

int GraphBuilder::upsample(const std::string& name, int x, int64_t scale) {
  Op op = make_op(OpKind::upsample, name, {x});
  op.upsample_scale = scale;
  return add(std::move(op));
}

int GraphBuilder::upsample_linear(const std::string& name, int x, int64_t scale, bool align_corners,
                                  std::vector<int64_t> size) {
  Op op = make_op(OpKind::upsample, name, {x});
  op.upsample_scale = scale;
  op.upsample_linear = true;
  op.align_corners = align_corners;
  op.upsample_size = std::move(size);
  return add(std::move(op));
}

int GraphBuilder::convert_layout(const std::string& name, int x) {
  return add(make_op(OpKind::convert_layout, name, {x}));
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

void GraphBuilder::give_values(const std::string& name, GivenValues values) {
  // Only the last op's own parameters and buffers: a scan of every parameter for each op of a
  // 100,000-node model would be quadratic.
  if (!graph_.ops.empty()) {
    const Op& last = graph_.ops.back();
    for (auto [ids, list] : {std::pair{&last.params, &graph_.params}, std::pair{&last.buffers, &graph_.buffers}})
      for (const int id : *ids) {
        Param& p = (*list)[static_cast<size_t>(id)];
        if (p.name != name) continue;
        if (!values || static_cast<int64_t>(values->size()) != p.desc.numel())
          throw GraphError(name + ": the file gives " + std::to_string(values ? values->size() : 0) +
                           " values, where it has " + std::to_string(p.desc.numel()));
        p.init = ParamInit::given;
        p.values = std::move(values);
        return;
      }
  }
  throw GraphError(name + ": the file gives values for it, but the op has no such parameter");
}

}  // namespace convbench

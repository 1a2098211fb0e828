// max_pool and avg_pool: backward reads the input; max_pool's forward also saves the argmax
// indices (int64 per output element, as PyTorch). FLOPs: max_pool forward K-1 comparisons per
// output; avg_pool K adds per output each way.
#include <string>

#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

OpShape infer_pool(const Graph& graph, Op& op) {
  const std::string& name = op.name;
  const PoolAttrs& a = op.pool;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const int dims = in.spatial_rank();
  check_window(name, a.kernel, dims, "kernel", 1);
  check_window(name, a.stride, dims, "stride", 1);
  check_window(name, a.padding, dims, "padding", 0);
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d)
    require_at(a.padding[d] * 2 <= a.kernel[d], name, {"padding"},
               "pool padding " + std::to_string(a.padding[d]) + " is more than half the kernel " +
                   std::to_string(a.kernel[d]) + " in dim " + std::to_string(d));
  OpShape s{in, {}, {}};
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d) {
    const int64_t k = a.kernel[d], padded = in.shape[d + 2] + 2 * a.padding[d];
    require_at(k <= padded, name, {"kernel"},
               "the pool window " + std::to_string(k) + " in dim " + std::to_string(d) +
                   " is larger than the padded input " + std::to_string(padded));
    s.output.shape[d + 2] = window_output_size(in.shape[d + 2], k, a.stride[d], a.padding[d], 1);
  }
  return s;
}

// A custom pool downsamples by 2 unless told otherwise (configs/README.md "Custom variants"): kernel 2,
// stride the kernel, padding 0 ("same": (kernel - 1) / 2).
void apply_pool_fields(const OpFieldValues& f, const FieldContext& c, Op& op) {
  PoolAttrs& a = op.pool;
  a.kernel = f.get<std::vector<int64_t>>("kernel").value_or(std::vector<int64_t>(static_cast<size_t>(c.dims), 2));
  a.stride = f.get<std::vector<int64_t>>("stride").value_or(a.kernel);
  if (auto padding = f.get<std::vector<int64_t>>("padding")) {
    a.padding = *padding;
  } else {
    a.padding.assign(a.kernel.size(), 0);
    if (f.is_keyword("padding", "same"))
      for (size_t d = 0; d < a.kernel.size(); ++d) a.padding[d] = (a.kernel[d] - 1) / 2;
  }
}

const std::vector<OpField> kPoolFields = {
    {"kernel", FieldKind::per_dim_positive}, {"stride", FieldKind::per_dim_positive}, {"padding", FieldKind::padding}};

nlohmann::ordered_json pool_attributes(const Op& op) {
  return {{"kernel", op.pool.kernel}, {"stride", op.pool.stride}, {"padding", op.pool.padding}};
}

}  // namespace

// autocast: CPU autocast runs max_pool3d and avg_pool3d in float32 (its fp32 list; a bfloat16
// input comes back float32, checked in the peer environment) and 2-D pools in their input's
// dtype; CUDA autocast has no rule for either, so they follow their input.
namespace {
AutocastClass pool_autocast(const AutocastQuery& q) {
  const bool three_d = q.graph.desc(q.op.inputs.at(0)).spatial_rank() == 3;
  return q.device == AutocastDevice::cpu && three_d ? AutocastClass::float32 : AutocastClass::follows;
}
void pool_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  OnnxNode n = w.node(op.kind == OpKind::max_pool ? "MaxPool" : "AveragePool", op.name, {in(w, op)}, {out(w, op)});
  n.ints("kernel_shape", op.pool.kernel);
  n.ints("strides", op.pool.stride);
  n.ints("pads", twice(op.pool.padding));
  if (op.kind == OpKind::avg_pool) n.integer("count_include_pad", 1);  // convbench's (PyTorch's) divisor
}

}  // namespace

OpDefinition define_max_pool() {
  OpDefinition d;
  d.kind = OpKind::max_pool;
  d.fields = kPoolFields;
  d.apply_fields = apply_pool_fields;
  d.saved = {{0}, false, {}};
  d.aux = [](const Graph& graph, const Op& op) {
    TensorDesc indices = graph.desc(op.output);
    indices.dtype = DType::int64;
    return std::vector<TensorDesc>{indices};
  };
  d.aux_names = {"indices"};
  d.work = [](const WorkQuery& q) {
    OpWork w;
    w.elementwise = {checked_mul(q.output_elements(), count_product(q.op.pool.kernel) - 1), 0, 0};
    return w;
  };
  d.attributes = pool_attributes;
  d.infer = infer_pool;
  d.autocast = pool_autocast;
  d.traits = OpTraits{};
  d.onnx_export = pool_onnx;
  d.peer_module = "nn.MaxPool2d";
  return d;
}

OpDefinition define_avg_pool() {
  OpDefinition d;
  d.kind = OpKind::avg_pool;
  d.fields = kPoolFields;
  d.apply_fields = apply_pool_fields;
  d.saved = {{0}, false, {}};
  d.work = [](const WorkQuery& q) {
    const int64_t n = checked_mul(q.output_elements(), count_product(q.op.pool.kernel));
    OpWork w;
    w.elementwise = {n, q.any_input_grad() ? n : 0, 0};
    return w;
  };
  d.attributes = pool_attributes;
  d.infer = infer_pool;
  d.autocast = pool_autocast;
  d.traits = OpTraits{};
  d.onnx_export = pool_onnx;
  d.peer_module = "nn.AvgPool2d";
  return d;
}

}  // namespace convbench

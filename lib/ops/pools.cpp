// max_pool and avg_pool: backward reads the input; max_pool's forward also saves the argmax
// indices (int64 per output element, as PyTorch). FLOPs: max_pool forward K-1 comparisons per
// output; avg_pool K adds per output each way.
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
  OpShape s{in, {}, {}};
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d) {
    require(a.padding[d] * 2 <= a.kernel[d], name, "padding must be at most half the kernel");
    require(a.kernel[d] <= in.shape[d + 2] + 2 * a.padding[d], name,
            "kernel " + dims_string(a.kernel) + " is larger than the padded input " + in.shape_string());
    s.output.shape[d + 2] = window_output_size(in.shape[d + 2], a.kernel[d], a.stride[d], a.padding[d], 1);
  }
  return s;
}

nlohmann::ordered_json pool_attributes(const Op& op) {
  return {{"kernel", op.pool.kernel}, {"stride", op.pool.stride}, {"padding", op.pool.padding}};
}

}  // namespace

OpDefinition define_max_pool() {
  OpDefinition d;
  d.kind = OpKind::max_pool;
  d.spec_fields = {"kernel", "stride", "padding"};
  d.saved = {{0}, false};
  d.aux = [](const Graph& graph, const Op& op) {
    TensorDesc indices = graph.desc(op.output);
    indices.dtype = DType::int64;
    return std::vector<TensorDesc>{indices};
  };
  d.work = [](const WorkQuery& q) {
    OpWork w;
    w.elementwise = {checked_mul(q.output_elements(), count_product(q.op.pool.kernel) - 1), 0, 0};
    return w;
  };
  d.attributes = pool_attributes;
  d.infer = infer_pool;
  return d;
}

OpDefinition define_avg_pool() {
  OpDefinition d;
  d.kind = OpKind::avg_pool;
  d.spec_fields = {"kernel", "stride", "padding"};
  d.saved = {{0}, false};
  d.work = [](const WorkQuery& q) {
    const int64_t n = checked_mul(q.output_elements(), count_product(q.op.pool.kernel));
    OpWork w;
    w.elementwise = {n, q.any_input_grad() ? n : 0, 0};
    return w;
  };
  d.attributes = pool_attributes;
  d.infer = infer_pool;
  return d;
}

}  // namespace convbench

// max_pool and avg_pool: backward reads the input; max_pool's forward also saves the argmax
// indices (int64 per output element, as PyTorch). FLOPs: max_pool forward K-1 comparisons per
// output; avg_pool K adds per output each way.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

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
  return d;
}

}  // namespace convbench

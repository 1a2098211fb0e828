#include "backends/reference/reference_backend.hpp"

#include <cstring>
#include <stdexcept>

#include "backends/reference/reference_kernels.hpp"

namespace convbench {
namespace {

void require_same_shape(const TensorDesc& a, const TensorDesc& b, const char* what) {
  if (a.shape != b.shape)
    throw std::invalid_argument(std::string("reference backend: ") + what + ": shapes differ: " + a.shape_string() +
                                " vs " + b.shape_string());
}

}  // namespace

std::optional<std::string> ReferenceBackend::unsupported(const Graph&, const Op&) const { return std::nullopt; }

int64_t ReferenceBackend::workspace_bytes(const Graph&, const Op&, Phase, bool) { return 0; }

void ReferenceBackend::forward(const ForwardCall& call) {
  using namespace reference;
  switch (call.op.kind) {
    case OpKind::conv: return conv_forward(call);
    case OpKind::conv_transpose: return conv_transpose_forward(call);
    case OpKind::batch_norm: return batch_norm_forward(call);
    case OpKind::group_norm: return group_norm_forward(call);
    case OpKind::relu: return relu_forward(call);
    case OpKind::leaky_relu: return leaky_relu_forward(call);
    case OpKind::dropout: return dropout_forward(call);
    case OpKind::add: return add_forward(call);
    case OpKind::sub: return sub_forward(call);
    case OpKind::concat: return concat_forward(call);
    case OpKind::max_pool: return max_pool_forward(call);
    case OpKind::avg_pool: return avg_pool_forward(call);
    case OpKind::upsample: return upsample_forward(call);
  }
  throw std::invalid_argument("reference backend: unknown op kind in " + call.op.name);
}

void ReferenceBackend::backward(const BackwardCall& call) {
  using namespace reference;
  switch (call.op.kind) {
    case OpKind::conv: return conv_backward(call);
    case OpKind::conv_transpose: return conv_transpose_backward(call);
    case OpKind::batch_norm: return batch_norm_backward(call);
    case OpKind::group_norm: return group_norm_backward(call);
    case OpKind::relu: return relu_backward(call);
    case OpKind::leaky_relu: return leaky_relu_backward(call);
    case OpKind::dropout: return dropout_backward(call);
    case OpKind::add: return add_backward(call);
    case OpKind::sub: return sub_backward(call);
    case OpKind::concat: return concat_backward(call);
    case OpKind::max_pool: return max_pool_backward(call);
    case OpKind::avg_pool: return avg_pool_backward(call);
    case OpKind::upsample: return upsample_backward(call);
  }
  throw std::invalid_argument("reference backend: unknown op kind in " + call.op.name);
}

void ReferenceBackend::accumulate(Tensor& dst, const Tensor& src) {
  require_same_shape(dst.desc, src.desc, "accumulate");
  std::vector<double> d = reference::load(dst);
  const std::vector<double> s = reference::load(src);
  for (size_t i = 0; i < d.size(); ++i) d[i] += s[i];
  reference::store(dst, d);
}

void ReferenceBackend::add(Tensor& out, const Tensor& a, const Tensor& b) {
  require_same_shape(a.desc, b.desc, "add");
  require_same_shape(out.desc, a.desc, "add");
  std::vector<double> sum = reference::load(a);
  const std::vector<double> other = reference::load(b);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += other[i];
  reference::store(out, sum);
}

void ReferenceBackend::copy_from_host(Tensor& dst, const void* src) {
  std::memcpy(dst.raw(), src, static_cast<size_t>(dst.desc.bytes()));
}

void ReferenceBackend::copy_to_host(const Tensor& src, void* dst) {
  std::memcpy(dst, src.raw(), static_cast<size_t>(src.desc.bytes()));
}

}  // namespace convbench

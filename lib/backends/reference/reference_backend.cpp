#include "backends/reference/reference_backend.hpp"

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

ReferenceBackend::ReferenceBackend() : HostBackend("reference") {
  reference::register_conv_kernels(kernels_);
  reference::register_batch_norm_kernels(kernels_);
  reference::register_group_norm_kernels(kernels_);
  reference::register_layer_norm_kernels(kernels_);
  reference::register_elementwise_kernels(kernels_);
  reference::register_concat_kernels(kernels_);
  reference::register_pool_kernels(kernels_);
  reference::register_upsample_kernels(kernels_);
  reference::register_layout_kernels(kernels_);
  reference::register_linear_kernels(kernels_);
  reference::register_fold_kernels(kernels_);
}

std::optional<std::string> ReferenceBackend::limitation(const Graph&, const Op&) const { return std::nullopt; }

int64_t ReferenceBackend::workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  return reference::fold_workspace_bytes(graph, op, phase, training);
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

}  // namespace convbench

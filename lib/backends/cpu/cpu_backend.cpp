#include "backends/cpu/cpu_backend.hpp"

#include <stdexcept>

#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_limits.hpp"
#include "backends/cpu/onednn_ops.hpp"

namespace convbench {

CpuBackend::CpuBackend() : HostBackend("cpu"), onednn_(std::make_unique<cpu::OneDnnOps>()) {
  const cpu::CpuKernelContext context{*onednn_, group_stats_};
  cpu::register_conv_kernels(kernels_, context);
  cpu::register_batch_norm_kernels(kernels_, context);
  cpu::register_group_norm_kernels(kernels_, context);
  cpu::register_elementwise_kernels(kernels_);
  cpu::register_concat_kernels(kernels_);
  cpu::register_upsample_kernels(kernels_);
  cpu::register_layout_kernels(kernels_);
  cpu::register_pool_kernels(kernels_);
  cpu::register_linear_kernels(kernels_);
  cpu::register_fold_kernels(kernels_, context);
}
CpuBackend::~CpuBackend() = default;

std::optional<std::string> CpuBackend::limitation(const Graph& graph, const Op& op) const {
  // oneDNN has bfloat16 convolutions, but this backend's kernels are float32 throughout.
  if (graph.precision != Precision::plain)
    return "cpu backend computes float32 only: precision " + std::string(to_string(graph.precision)) +
           " runs on --device reference for now";
  const DType dtype = graph.desc(op.inputs.at(0)).dtype;
  if (dtype != DType::float32 && dtype != DType::tf32)
    return "cpu backend computes float32; use --device reference for float64/float16/bfloat16 (got " +
           std::string(to_string(dtype)) + ")";
  // Before any oneDNN call: oneDNN 2.6 crashes on sizes past its 32-bit counts.
  return cpu::onednn_size_limitation(graph, op);
}

int64_t CpuBackend::workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  if (op.kind == OpKind::folded_conv) return cpu::fold_workspace_bytes(*onednn_, graph, op, phase, training);
  return cpu::conv_workspace_bytes(*onednn_, graph, op, phase, training);
}

int64_t CpuBackend::primitives_created() const { return onednn_->primitives_created(); }

void CpuBackend::accumulate(Tensor& dst, const Tensor& src) { cpu::accumulate(dst, src); }

void CpuBackend::add(Tensor& out, const Tensor& a, const Tensor& b) { cpu::add(a, b, out); }

}  // namespace convbench

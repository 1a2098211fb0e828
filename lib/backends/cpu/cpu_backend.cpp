#include "backends/cpu/cpu_backend.hpp"

#include <stdexcept>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_limits.hpp"
#include "backends/cpu/onednn_ops.hpp"
#include "backends/cpu/widened_calls.hpp"

namespace convbench {

CpuBackend::CpuBackend(ConvFusion fusion)
    : HostBackend("cpu"), fusion_(fusion), onednn_(std::make_unique<cpu::OneDnnOps>(fusion)) {
  const cpu::CpuKernelContext context{*onednn_, norm_stats_, widening_scratch_};
  cpu::register_conv_kernels(kernels_, context);
  cpu::register_batch_norm_kernels(kernels_, context);
  cpu::register_group_norm_kernels(kernels_, context);
  cpu::register_layer_norm_kernels(kernels_, context);
  cpu::register_elementwise_kernels(kernels_, context);
  cpu::register_concat_kernels(kernels_);
  cpu::register_upsample_kernels(kernels_);
  cpu::register_layout_kernels(kernels_);
  cpu::register_pool_kernels(kernels_);
  cpu::register_linear_kernels(kernels_);
  cpu::register_fold_kernels(kernels_, context);
  // These take bfloat16 tensors themselves: the convolutions (oneDNN in bfloat16; conv_cpu.cpp
  // widens the own depthwise kernel), the casts, batch norm and ReLU (the ops of nearly every
  // block, templated on their storage). Every other kernel is float32.
  cpu::widen_half_precision_calls(
      kernels_, widening_scratch_,
      {OpKind::conv, OpKind::conv_transpose, OpKind::cast, OpKind::batch_norm, OpKind::relu});
}
CpuBackend::~CpuBackend() = default;

std::optional<std::string> CpuBackend::limitation(const Graph& graph, const Op& op) const {
  if (graph.precision != Precision::plain) {
    const DType low = *autocast_dtype(graph.precision);
    if (!onednn_->has_fast_conv(low))
      return "cpu backend: oneDNN " + std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) +
             " has no optimised " + std::string(to_string(low)) + " convolution on this CPU, so precision " +
             std::string(to_string(graph.precision)) + " runs on --device reference";
    for (int v : op.inputs) {
      const DType d = graph.desc(v).dtype;
      if (d != DType::float32 && d != low)
        return "cpu backend: under precision " + std::string(to_string(graph.precision)) + " it computes float32 and " +
               std::string(to_string(low)) + " (got " + std::string(to_string(d)) + ")";
    }
    return cpu::onednn_size_limitation(graph, op);
  }
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

void CpuBackend::forward(const ForwardCall& call) {
  if (fuses_activations(fusion_)) {
    // The conv's primitive applied it, unless the conv ran on the own depthwise kernel.
    const int conv = conv_taking_activation(call.graph, call.op);
    if (conv >= 0 && !cpu::is_own_depthwise_conv(call.graph, call.graph.ops[static_cast<size_t>(conv)])) {
      ++activations_taken_;
      return;
    }
  }
  HostBackend::forward(call);
}

int64_t CpuBackend::primitives_created() const { return onednn_->primitives_created(); }

void CpuBackend::accumulate(Tensor& dst, const Tensor& src) { cpu::accumulate(dst, src); }

void CpuBackend::add(Tensor& out, const Tensor& a, const Tensor& b) { cpu::add(a, b, out); }

}  // namespace convbench

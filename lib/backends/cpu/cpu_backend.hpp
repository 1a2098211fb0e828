// The cpu backend: oneDNN (the library PyTorch's CPU path uses) for convolution, transposed
// convolution and the channels_last batch-norm forward; our own OpenMP loops for the rest, where
// oneDNN 2.6 is slow or imprecise (3-D depthwise convolution, channels_first and backward batch
// norm; see each file) or has nothing (group norm, elementwise, data movement, pooling with
// PyTorch's index convention). Semantics are exactly the reference backend's. Every byte it
// needs beyond the tensors the executor hands it lives in the executor's workspace (oneDNN runs
// with user-managed scratchpads; our loops need no scratch beyond per-channel statistics), so the
// allocator's statistics are the whole story.
//
// It computes in float32: tf32 is a GPU tensor-core mode, so a tf32 graph runs in plain float32
// here. float64, float16 and bfloat16 graphs are unsupported (use the reference backend).
// Mixed precision runs where oneDNN has optimised convolutions in its low dtype (amp_bfloat16 on
// a CPU with AVX512-BF16 or AMX): the convolutions compute in bfloat16, batch norm and ReLU
// read and write bfloat16 in their loops, every other kernel runs on float32 copies of its
// half-precision tensors (widened_calls.hpp), outside the step's memory.
#pragma once

#include <memory>
#include <vector>

#include "backends/conv_fusion.hpp"
#include "backends/host_backend.hpp"

namespace convbench {

namespace cpu {
class OneDnnOps;  // oneDNN engine, stream and cached primitives (onednn_ops.hpp)
}

class CpuBackend final : public HostBackend {
 public:
  // `fusion`: conv_act runs a oneDNN conv and the in-place activation after it as one primitive
  // (an eltwise post-op); the activation op then runs nothing (backends/conv_fusion.hpp).
  explicit CpuBackend(ConvFusion fusion = ConvFusion::none);
  ~CpuBackend() override;
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  // float32 and tf32, and the AMP modes whose low dtype oneDNN convolves fast here; no tensor a
  // oneDNN primitive takes past oneDNN's 32-bit sizes (onednn_limits.hpp).
  std::optional<std::string> limitation(const Graph& graph, const Op& op) const override;
  // Every op kind; each family's *_cpu.cpp registers its kernels.
  const KernelTable& kernels() const override { return kernels_; }
  // Exactly the bytes forward()/backward() of this op use: oneDNN scratchpads and the
  // reordered (blocked-format) copies of activations and weights, each 64-byte aligned.
  // The first call for an op creates and caches its oneDNN primitives.
  int64_t workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) override;

  // Every op through its kernel, but an activation a fused conv before it has applied.
  void forward(const ForwardCall& call) override;

  void accumulate(Tensor& dst, const Tensor& src) override;
  void add(Tensor& out, const Tensor& a, const Tensor& b) override;

  // How many oneDNN primitives have been created so far (tests check that repeated calls of the
  // same op reuse them).
  int64_t primitives_created() const;
  // How many activation calls a fused conv before them has taken so far (tests check that
  // --conv-fusion conv_act fused what the graph's rule says).
  int64_t activations_taken() const { return activations_taken_; }

 private:
  ConvFusion fusion_;
  int64_t activations_taken_ = 0;
  std::unique_ptr<cpu::OneDnnOps> onednn_;
  std::vector<float> norm_stats_;  // group- and layer-norm mean and rstd where no aux tensor holds them (inference)
  // The float32 copies a half-precision call computes on (widened_calls.hpp): apart from the
  // step's allocator, whose statistics are the step's memory.
  CachingHostAllocator widening_scratch_;
  KernelTable kernels_;  // after what its kernels refer to
};

}  // namespace convbench

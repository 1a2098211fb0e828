// Internal to the cpu backend: the ops it computes in its own loops (float32, OpenMP over large
// ranges, branch-free inner loops the compiler vectorises). Semantics are the reference
// backend's; see lib/backends/reference/ for the obviously-correct versions.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "graph/op.hpp"
#include "runtime/backend.hpp"
#include "runtime/half_float.hpp"
#include "runtime/tensor.hpp"

namespace convbench::cpu {

class OneDnnOps;  // oneDNN engine, stream and cached primitives (onednn_ops.hpp)

// What the cpu backend's kernels share: oneDNN, room for group- and layer-norm statistics where no aux
// tensor holds them (inference), and the allocator of the float32 copies a half-precision call
// computes on (widened_calls.hpp). All belong to the backend and outlive its kernel table.
struct CpuKernelContext {
  OneDnnOps& onednn;
  std::vector<float>& norm_stats;
  Allocator& widening_scratch;
};

// Each op family's file registers its kinds' forward and backward kernels, side by side
// (cpu_backend.cpp calls them all).
void register_conv_kernels(KernelTable& table, CpuKernelContext context);  // conv_cpu.cpp
void register_batch_norm_kernels(KernelTable& table, CpuKernelContext context);
void register_group_norm_kernels(KernelTable& table, CpuKernelContext context);
void register_layer_norm_kernels(KernelTable& table, CpuKernelContext context);
void register_elementwise_kernels(KernelTable& table, CpuKernelContext context);
void register_concat_kernels(KernelTable& table);  // concat, slice
void register_upsample_kernels(KernelTable& table);
void register_layout_kernels(KernelTable& table);  // convert_layout, space_to_depth, depth_to_space, channel_shuffle
void register_pool_kernels(KernelTable& table);
void register_linear_kernels(KernelTable& table);                          // linear_cpu.cpp
void register_fold_kernels(KernelTable& table, CpuKernelContext context);  // fold_cpu.cpp

// A conv or conv_transpose call: the own depthwise kernel or oneDNN's (conv_cpu.cpp), and its
// workspace; folded_conv runs its folded kernel through them.
void conv_forward(CpuKernelContext context, const ForwardCall& call);
void conv_backward(CpuKernelContext context, const BackwardCall& call);
int64_t conv_workspace_bytes(OneDnnOps& onednn, const Graph& graph, const Op& op, Phase phase, bool training);
// A folded_conv call's workspace: its kernel (inference) or the kernel's gradient (backward), the
// fold's registers (float), and the conv's own workspace (fold_cpu.cpp). 0 for other ops.
int64_t fold_workspace_bytes(OneDnnOps& onednn, const Graph& graph, const Op& op, Phase phase, bool training);

// Spatial dims as (d, h, w); a 2-D tensor has d = 1 (upsample_cpu.cpp, layout_cpu.cpp).
struct SpatialDims {
  int64_t d, h, w;
  int64_t volume() const { return d * h * w; }
};

inline SpatialDims spatial_dims(const TensorDesc& t) {
  if (t.rank() == 4) return {1, t.shape[2], t.shape[3]};
  return {t.shape[2], t.shape[3], t.shape[4]};
}

template <class T>
T* at_or_null(const std::vector<T*>& v, size_t i) {
  return i < v.size() ? v[i] : nullptr;
}

// The tensor a kernel cannot do without; a missing one is the executor's bug, said plainly.
inline const Tensor& need(const Tensor* t, const Op& op, const char* what) {
  if (t == nullptr) throw std::invalid_argument(op.name + ": cpu backend needs the " + what);
  return *t;
}

// Elementwise (layout-agnostic unless noted), elementwise_cpu.cpp.
void relu_forward(const Tensor& x, Tensor& y);
void relu_backward(const Tensor& y, const Tensor& dy, Tensor& dx);  // from the saved output
void leaky_relu_forward(const Tensor& x, Tensor& y, float slope);
void leaky_relu_backward(const Tensor& x, const Tensor& dy, Tensor& dx, float slope);
// mask (nullptr: not saved): uint8 in x's layout; logical element i is dropout_keep(i, seed, p).
void dropout_forward(const Tensor& x, Tensor& y, Tensor* mask, uint64_t seed, float p);
void dropout_backward(const Tensor& mask, const Tensor& dy, Tensor& dx, float p);
void copy(const Tensor& src, Tensor& dst);
void add(const Tensor& a, const Tensor& b, Tensor& out);
void sub(const Tensor& a, const Tensor& b, Tensor& out);
void negate(const Tensor& x, Tensor& out);
void accumulate(Tensor& dst, const Tensor& src);

// Concat, concat_cpu.cpp.
void concat_forward(const std::vector<const Tensor*>& xs, Tensor& y);
// channels[i]: operand i's channel count; dxs[i] == nullptr skips that operand.
void concat_backward(const Tensor& dy, const std::vector<Tensor*>& dxs, const std::vector<int64_t>& channels);
// Upsampling, upsample_cpu.cpp.
void upsample_forward(const Tensor& x, Tensor& y, int64_t scale);
void upsample_backward(const Tensor& dy, Tensor& dx, int64_t scale);
// Linear (bilinear, trilinear) to y's size, as PyTorch's kernels; backward scatters (the adjoint).
void upsample_linear_forward(const Tensor& x, Tensor& y, bool align_corners);
void upsample_linear_backward(const Tensor& dy, Tensor& dx, bool align_corners);

// Pooling, pool_cpu.cpp. indices: int64 in y's layout, flat index into x's spatial plane.
void max_pool_forward(const Tensor& x, Tensor& y, Tensor* indices, const PoolAttrs& attrs);
// From the saved indices, or without them (nullptr) from the saved input x.
void max_pool_backward(const Tensor* indices, const Tensor* x, const Tensor& dy, Tensor& dx, const PoolAttrs& attrs);
void avg_pool_forward(const Tensor& x, Tensor& y, const PoolAttrs& attrs);
void avg_pool_backward(const Tensor& dy, Tensor& dx, const PoolAttrs& attrs);
void global_avg_pool_forward(const Tensor& x, Tensor& y);  // y: N * C values
void global_avg_pool_backward(const Tensor& dy, Tensor& dx);

// 3-D depthwise convolution (groups == in == out channels), depthwise_conv_cpu.cpp: oneDNN 2.6
// has no depthwise kernel for 3-D. No workspace.
bool is_own_depthwise_conv(const Graph& graph, const Op& op);
void depthwise_conv_forward(const ForwardCall& call);
void depthwise_conv_backward(const BackwardCall& call);

// The passes of batch and group norm, channel_sums_cpu.cpp. Arrays of coefficients and shifts
// hold one value per (sample, channel) plane, n * C + c.
// Per plane sums over positions, in double: s1 = sum(a - sa), s2 = sum((a - sa) * (b - sb));
// without b (nullptr), s2 is not computed (sb, s2 may be nullptr).
// Tensors (a, b; u, v, out) in float32, or bfloat16 under mixed precision.
void channel_sums(const TensorDesc& d, const float* a, const float* sa, const float* b, const float* sb, double* s1,
                  double* s2);
void channel_sums(const TensorDesc& d, const BFloat16* a, const float* sa, const BFloat16* b, const float* sb,
                  double* s1, double* s2);
// out = p * u + q * (v - m) + r per element, with its plane's coefficients; u == nullptr drops
// the first term (p may be nullptr).
void channel_affine(const TensorDesc& d, const float* u, const float* p, const float* v, const float* m, const float* q,
                    const float* r, float* out);
void channel_affine(const TensorDesc& d, const BFloat16* u, const float* p, const BFloat16* v, const float* m,
                    const float* q, const float* r, BFloat16* out);

// Batch norm in our own loops, batch_norm_cpu.cpp: forward for channels_first tensors (oneDNN's
// nchw kernel is slow; channels_last forward runs on oneDNN), backward for both layouts.
void batch_norm_forward_training(const ForwardCall& call);
void batch_norm_forward_inference(const ForwardCall& call);
void batch_norm_backward(const BackwardCall& call);
// batch_norm_act (Inplace-ABN), both layouts: forward through the two above and leaky ReLU in
// place (the output may be the input's tensor); backward from the saved output alone.
void batch_norm_act_forward(const ForwardCall& call);
void batch_norm_act_backward(const BackwardCall& call);
// From the batch's biased variance: aux[1] = invstd, and PyTorch's running statistics (momentum,
// unbiased variance) from aux[0] = mean and the variance.
void finish_batch_norm_statistics(const ForwardCall& call, const std::vector<double>& variance);

// Group norm, group_norm_cpu.cpp. mean/rstd: N * groups floats (the aux tensors in training).
void group_norm_stats(const Tensor& x, int64_t groups, double eps, float* mean, float* rstd);
void group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y, float* mean, float* rstd,
                        int64_t groups, double eps);
void group_norm_backward(const Tensor& x, const float* mean, const float* rstd, const Tensor& gamma, const Tensor& dy,
                         Tensor* dx, Tensor& dgamma, Tensor& dbeta, int64_t groups);

}  // namespace convbench::cpu

// Layer norm over the channels at each position, forward and backward, as the reference backend
// (and PyTorch's native_layer_norm on a channels-last view) computes it: mean and 1/std per
// (sample, position) over C (biased variance), saved in float; affine gamma and beta per channel.
//
// One thread per position walks its C channels (Welford): in channels-first, neighbouring threads
// read neighbouring positions, so each channel's reads coalesce; in channels-last a thread reads a
// contiguous row. The elementwise passes use the fragments of common.cuh, and the parameter
// gradients the per-channel reductions that batch and group norm use.
#include <stdexcept>

#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

// mean / rstd of position p = n * S + sp into mean[p] / rstd[p].
template <class T>
__global__ void position_stats_kernel(ActShape s, const T* x, double eps, float* mean, float* rstd) {
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= int64_t{s.n} * s.s) return;
  const int n = static_cast<int>(p / s.s), sp = static_cast<int>(p % s.s);
  Welford<float> w;
  for (int c = 0; c < s.c; ++c) w.add(to_float(x[offset_of(n, c, sp, s)]));
  mean[p] = w.mean;
  rstd[p] = static_cast<float>(1.0 / sqrt(static_cast<double>(w.m2) / w.count + eps));
}

template <class T>
__global__ void layer_norm_apply(ActShape s, const T* x, const float* mean, const float* rstd, const T* gamma,
                                 const T* beta, T* y, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float v[N];
  load_frag(x, p0, count, vec, v);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s)) {
    if (p0 + k >= count) break;
    const int p = pos.n * s.s + pos.sp;
    v[k] = (v[k] - mean[p]) * rstd[p] * to_float(gamma[pos.c]) + to_float(beta[pos.c]);
  }
  store_frag(y, p0, count, vec, v);
}

// sums[p] = sum over c of g * gamma, sums[P + p] = sum of g * gamma * xhat, per position.
template <class T>
__global__ void position_grad_sums_kernel(ActShape s, const T* x, const T* g, const float* mean, const float* rstd,
                                          const T* gamma, float* sums) {
  const int64_t positions = int64_t{s.n} * s.s;
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= positions) return;
  const int n = static_cast<int>(p / s.s), sp = static_cast<int>(p % s.s);
  float sum_gg = 0.0f, sum_gg_xhat = 0.0f;
  for (int c = 0; c < s.c; ++c) {
    const int offset = offset_of(n, c, sp, s);
    const float gg = to_float(g[offset]) * to_float(gamma[c]);
    sum_gg += gg;
    sum_gg_xhat += gg * (to_float(x[offset]) - mean[p]) * rstd[p];
  }
  sums[p] = sum_gg;
  sums[positions + p] = sum_gg_xhat;
}

template <class T>
__global__ void layer_norm_grad_input(ActShape s, const T* x, const T* g, const float* mean, const float* rstd,
                                      const T* gamma, const float* sums, float inv_c, T* grad_x, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  const int positions = s.n * s.s;
  float vx[N], vg[N], out[N];
  load_frag(x, p0, count, vec, vx);
  load_frag(g, p0, count, vec, vg);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s)) {
    out[k] = 0.0f;
    if (p0 + k >= count) continue;
    const int p = pos.n * s.s + pos.sp;
    const float xhat = (vx[k] - mean[p]) * rstd[p];
    out[k] = rstd[p] * (vg[k] * to_float(gamma[pos.c]) - sums[p] * inv_c - xhat * sums[positions + p] * inv_c);
  }
  store_frag(grad_x, p0, count, vec, out);
}

// Per channel: sum(g * xhat) and sum(g) over N and space.
template <class T>
struct LoadLayerNormParamSums {
  const T* x;
  const T* g;
  const float* mean;
  const float* rstd;
  int spatial;
  __device__ void operator()(Sums<2>& acc, int offset, int, int n, int sp) const {
    const int p = n * spatial + sp;
    const float gv = to_float(g[offset]);
    acc.v[0] += gv * (to_float(x[offset]) - mean[p]) * rstd[p];
    acc.v[1] += gv;
  }
};

}  // namespace

int64_t layer_norm_forward_workspace_bytes(ActShape shape) {
  return region_bytes<float>(2 * static_cast<int64_t>(shape.n) * shape.s);
}

int64_t layer_norm_backward_workspace_bytes(ActShape shape) {
  const int64_t splits = channel_reduce_plan(shape).splits;
  return region_bytes<float>(2 * static_cast<int64_t>(shape.n) * shape.s) + region_bytes<Sums<2>>(splits * shape.c);
}

void layer_norm_forward(DType dtype, const LayerNormForward& a, void* workspace, cudaStream_t stream) {
  const ActShape s = a.shape;
  if (s.numel() <= 0) return;
  const int64_t positions = int64_t{s.n} * s.s;
  // Inference keeps no statistics: they live in the workspace for the apply pass.
  float* mean = a.save_mean ? a.save_mean : static_cast<float*>(workspace);
  float* rstd = a.save_rstd ? a.save_rstd : static_cast<float*>(workspace) + positions;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    CONVBENCH_LAUNCH(blocks_for(positions), kThreads, 0, stream, position_stats_kernel<T>)(s, x, a.eps, mean, rstd);
    CONVBENCH_CUDA_CHECK_LAUNCH();
    CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, layer_norm_apply<T>)
    (s, x, mean, rstd, static_cast<const T*>(a.gamma), static_cast<const T*>(a.beta), static_cast<T*>(a.y),
     all_aligned16(a.x, a.y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void layer_norm_backward(DType dtype, const LayerNormBackward& a, void* workspace, cudaStream_t stream) {
  const ActShape s = a.shape;
  if (!a.save_mean || !a.save_rstd)
    throw std::invalid_argument("cuda backend: layer_norm backward needs the statistics its training forward saved");
  if (s.numel() <= 0) return;
  const int64_t positions = int64_t{s.n} * s.s;
  float* sums = static_cast<float*>(workspace);
  auto* partial = reinterpret_cast<Sums<2>*>(static_cast<char*>(workspace) + region_bytes<float>(2 * positions));
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    const T* g = static_cast<const T*>(a.g);
    const T* gamma = static_cast<const T*>(a.gamma);
    if (a.grad_x) {
      CONVBENCH_LAUNCH(blocks_for(positions), kThreads, 0, stream, position_grad_sums_kernel<T>)
      (s, x, g, a.save_mean, a.save_rstd, gamma, sums);
      CONVBENCH_CUDA_CHECK_LAUNCH();
      const float inv_c = static_cast<float>(1.0 / s.c);
      CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, layer_norm_grad_input<T>)
      (s, x, g, a.save_mean, a.save_rstd, gamma, sums, inv_c, static_cast<T*>(a.grad_x),
       all_aligned16(a.x, a.g, a.grad_x));
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
    if (a.grad_gamma || a.grad_beta) {
      const ChannelReducePlan plan = channel_reduce_plan(s);
      launch_channel_partials(s, plan, LoadLayerNormParamSums<T>{x, g, a.save_mean, a.save_rstd, s.s}, partial, stream);
      CONVBENCH_LAUNCH(warp_merge_blocks(s.c), kThreads, 0, stream, affine_grad_finish<T>)
      (s.c, plan.splits, partial, static_cast<T*>(a.grad_gamma), static_cast<T*>(a.grad_beta));
    }
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

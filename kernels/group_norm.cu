// Group norm, forward and backward, as the reference backend (and PyTorch) computes it: mean and
// 1/std per (sample, group) over the group's channels and all spatial positions (biased
// variance), saved in float; affine gamma and beta per channel.
//
// One block reduces one (sample, group); the parameter gradients are per-channel reductions
// over (N, spatial) like batch norm's.
#include <stdexcept>

#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

// Memory position of element j of group (n, grp): the group's channels times all positions.
__device__ __forceinline__ int group_offset(const ActShape& s, int n, int grp, int cpg, int j) {
  if (!s.channels_last) return (n * s.c + grp * cpg) * s.s + j;  // contiguous in channels-first
  const int sp = j / cpg, cl = j - sp * cpg;
  return (n * s.s + sp) * s.c + grp * cpg + cl;
}

// mean / rstd of every (n, group) into stats[ng] / stats[NG + ng], and the saved copies.
template <class T>
__global__ void group_stats_kernel(ActShape s, int groups, const T* x, double eps, float* stats, float* save_mean,
                                   float* save_rstd) {
  __shared__ SharedArray<Welford<float>, kThreads> shared;
  const int ng = blockIdx.x, n = ng / groups, grp = ng % groups, cpg = s.c / groups;
  const int length = cpg * s.s;
  Welford<float> w;
  for (int j = threadIdx.x; j < length; j += blockDim.x) w.add(to_float(x[group_offset(s, n, grp, cpg, j)]));
  w = block_welford(w, shared.get());
  if (threadIdx.x == 0) {
    const float mean = w.mean;
    const float rstd = static_cast<float>(1.0 / sqrt(static_cast<double>(w.m2) / w.count + eps));
    const int count = s.n * groups;
    stats[ng] = mean;
    stats[count + ng] = rstd;
    if (save_mean) save_mean[ng] = mean;
    if (save_rstd) save_rstd[ng] = rstd;
  }
}

template <class T>
__global__ void group_norm_apply(ActShape s, int groups, const T* x, const float* mean, const float* rstd,
                                 const T* gamma, const T* beta, T* y, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  const int cpg = s.c / groups;
  float v[N];
  load_frag(x, p0, count, vec, v);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s)) {
    if (p0 + k >= count) break;
    const int c = pos.c, ng = pos.n * groups + c / cpg;
    v[k] = (v[k] - mean[ng]) * rstd[ng] * to_float(gamma[c]) + to_float(beta[c]);
  }
  store_frag(y, p0, count, vec, v);
}

// sums[ng] = sum(g * gamma), sums[NG + ng] = sum(g * gamma * xhat) over the group.
template <class T>
__global__ void group_grad_sums_kernel(ActShape s, int groups, const T* x, const T* g, const float* mean,
                                       const float* rstd, const T* gamma, float* sums) {
  __shared__ float scratch[32];
  const int ng = blockIdx.x, n = ng / groups, grp = ng % groups, cpg = s.c / groups;
  const int length = cpg * s.s;
  float sum_gg = 0.0f, sum_gg_xhat = 0.0f;
  for (int j = threadIdx.x; j < length; j += blockDim.x) {
    const int offset = group_offset(s, n, grp, cpg, j);
    const int c = grp * cpg + (s.channels_last ? j % cpg : j / s.s);
    const float gg = to_float(g[offset]) * to_float(gamma[c]);
    sum_gg += gg;
    sum_gg_xhat += gg * (to_float(x[offset]) - mean[ng]) * rstd[ng];
  }
  sum_gg = block_sum(sum_gg, scratch);
  sum_gg_xhat = block_sum(sum_gg_xhat, scratch);
  if (threadIdx.x == 0) {
    sums[ng] = sum_gg;
    sums[s.n * groups + ng] = sum_gg_xhat;
  }
}

template <class T>
__global__ void group_norm_grad_input(ActShape s, int groups, const T* x, const T* g, const float* mean,
                                      const float* rstd, const T* gamma, const float* sums, float inv_count, T* grad_x,
                                      bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  const int cpg = s.c / groups, ngroups = s.n * groups;
  float vx[N], vg[N], out[N];
  load_frag(x, p0, count, vec, vx);
  load_frag(g, p0, count, vec, vg);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s)) {
    out[k] = 0.0f;
    if (p0 + k >= count) continue;
    const int c = pos.c, ng = pos.n * groups + c / cpg;
    const float xhat = (vx[k] - mean[ng]) * rstd[ng];
    out[k] = rstd[ng] * (vg[k] * to_float(gamma[c]) - sums[ng] * inv_count - xhat * sums[ngroups + ng] * inv_count);
  }
  store_frag(grad_x, p0, count, vec, out);
}

// Per channel: sum(g * xhat) and sum(g) over N and space.
template <class T>
struct LoadParamSums {
  const T* x;
  const T* g;
  const float* mean;
  const float* rstd;
  int groups, cpg;
  __device__ void operator()(Sums<2>& acc, int offset, int c, int n, int) const {
    const int ng = n * groups + c / cpg;
    const float gv = to_float(g[offset]);
    acc.v[0] += gv * (to_float(x[offset]) - mean[ng]) * rstd[ng];
    acc.v[1] += gv;
  }
};

void check_groups(ActShape s, int groups) {
  if (groups <= 0 || s.c % groups != 0)
    throw std::invalid_argument("cuda backend: group_norm: " + std::to_string(s.c) +
                                " channels are not divisible into " + std::to_string(groups) + " groups");
}

}  // namespace

int64_t group_norm_forward_workspace_bytes(ActShape shape, int groups) {
  return region_bytes<float>(2 * static_cast<int64_t>(shape.n) * groups);
}

int64_t group_norm_backward_workspace_bytes(ActShape shape, int groups) {
  const int64_t splits = channel_reduce_plan(shape).splits;
  return region_bytes<float>(2 * static_cast<int64_t>(shape.n) * groups) + region_bytes<Sums<2>>(splits * shape.c);
}

void group_norm_forward(DType dtype, const GroupNormForward& a, void* workspace, cudaStream_t stream) {
  const ActShape s = a.shape;
  check_groups(s, a.groups);
  if (s.numel() <= 0) return;
  float* stats = static_cast<float*>(workspace);
  const int ngroups = s.n * a.groups;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    CONVBENCH_LAUNCH(ngroups, kThreads, 0, stream, group_stats_kernel<T>)
    (s, a.groups, x, a.eps, stats, a.save_mean, a.save_rstd);
    CONVBENCH_CUDA_CHECK_LAUNCH();
    CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, group_norm_apply<T>)
    (s, a.groups, x, stats, stats + ngroups, static_cast<const T*>(a.gamma), static_cast<const T*>(a.beta),
     static_cast<T*>(a.y), all_aligned16(a.x, a.y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void group_norm_backward(DType dtype, const GroupNormBackward& a, void* workspace, cudaStream_t stream) {
  const ActShape s = a.shape;
  check_groups(s, a.groups);
  if (!a.save_mean || !a.save_rstd)
    throw std::invalid_argument("cuda backend: group_norm backward needs the statistics its training forward saved");
  if (s.numel() <= 0) return;
  const int ngroups = s.n * a.groups, cpg = s.c / a.groups;
  float* sums = static_cast<float*>(workspace);
  auto* partial = reinterpret_cast<Sums<2>*>(static_cast<char*>(workspace) + region_bytes<float>(2 * int64_t{ngroups}));
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    const T* g = static_cast<const T*>(a.g);
    const T* gamma = static_cast<const T*>(a.gamma);
    if (a.grad_x) {
      CONVBENCH_LAUNCH(ngroups, kThreads, 0, stream, group_grad_sums_kernel<T>)
      (s, a.groups, x, g, a.save_mean, a.save_rstd, gamma, sums);
      CONVBENCH_CUDA_CHECK_LAUNCH();
      const float inv_count = static_cast<float>(1.0 / (static_cast<double>(cpg) * s.s));
      CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, group_norm_grad_input<T>)
      (s, a.groups, x, g, a.save_mean, a.save_rstd, gamma, sums, inv_count, static_cast<T*>(a.grad_x),
       all_aligned16(a.x, a.g, a.grad_x));
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
    if (a.grad_gamma || a.grad_beta) {
      const ChannelReducePlan plan = channel_reduce_plan(s);
      launch_channel_partials(s, plan, LoadParamSums<T>{x, g, a.save_mean, a.save_rstd, a.groups, cpg}, partial,
                              stream);
      CONVBENCH_LAUNCH(warp_merge_blocks(s.c), kThreads, 0, stream, affine_grad_finish<T>)
      (s.c, plan.splits, partial, static_cast<T*>(a.grad_gamma), static_cast<T*>(a.grad_beta));
    }
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

// Batch norm, forward (training and inference) and backward, as the reference backend (and
// PyTorch) computes it: the batch is normalised with its biased variance, the running variance
// is updated with the unbiased one, and mean and 1/std are saved per channel in float.
//
// gamma and beta (and their gradients) have the activations' dtype, or float32 under autocast,
// which keeps a batch norm's weights float32 while it runs in float16 or bfloat16.
//
// Statistics are two-stage per-channel reductions (kernels/common.cuh): Welford accumulators
// per chunk of rows, merged in double by one warp per channel. The backward pass reduces sum(g) and
// sum(g * xhat) the same way, then computes the input gradient elementwise.
#include <stdexcept>

#include "kernels/batch_norm_math.hpp"
#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

template <class T>
struct LoadWelford {
  const T* x;
  __device__ void operator()(Welford<float>& acc, int offset, int, int, int) const { acc.add(to_float(x[offset])); }
};

// Per channel: merges the chunks, writes mean and 1/std (stats[c], stats[C + c]), updates the
// running statistics and fills the saved statistics when given.
__global__ void batch_norm_stats_finish(int channels, int splits, const Welford<float>* partial, float* stats,
                                        float* running_mean, float* running_var, float* save_mean, float* save_invstd,
                                        double eps, double momentum) {
  const int c = warp_channel();
  if (c >= channels) return;  // whole warps
  const Welford<double> w = merge_welford(partial, splits, channels, c);
  if (!warp_leader()) return;
  const double var = w.m2 / w.count;  // biased: what the batch is normalised with
  const double invstd = 1.0 / sqrt(var + eps);
  stats[c] = static_cast<float>(w.mean);
  stats[channels + c] = static_cast<float>(invstd);
  running_mean[c] = static_cast<float>((1.0 - momentum) * running_mean[c] + momentum * w.mean);
  running_var[c] = static_cast<float>((1.0 - momentum) * running_var[c] + momentum * w.m2 / (w.count - 1.0));
  if (save_mean) save_mean[c] = static_cast<float>(w.mean);
  if (save_invstd) save_invstd[c] = static_cast<float>(invstd);
}

// Per channel: the sum and sum of squares in save_mean and save_invstd (conv_bn_stats) become
// the mean and 1/std, in place; the running statistics are updated as batch_norm_stats_finish does.
__global__ void batch_norm_stats_from_sums(int channels, double count, float* save_mean, float* save_invstd,
                                           float* running_mean, float* running_var, double eps, double momentum) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const ChannelMoments m = moments_from_sums(save_mean[c], save_invstd[c], count);
  save_mean[c] = static_cast<float>(m.mean);
  save_invstd[c] = static_cast<float>(1.0 / sqrt(m.biased_var + eps));
  running_mean[c] = static_cast<float>((1.0 - momentum) * running_mean[c] + momentum * m.mean);
  running_var[c] = static_cast<float>((1.0 - momentum) * running_var[c] + momentum * m.unbiased_var);
}

// y = (x - mean) * invstd * gamma + beta; `invstd_from_var`: the second array holds variances
// (inference, running_var) instead of 1/std.
// With `leaky` (batch_norm_act), leaky ReLU with `slope` follows. y may be x (in place): each
// thread reads its fragment before writing it.
template <class T, class P>
__global__ void batch_norm_apply(ActShape s, const T* x, const float* mean, const float* second, bool invstd_from_var,
                                 float eps, const P* gamma, const P* beta, T* y, bool vec, bool leaky, float slope) {
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
    const int c = pos.c;
    const float invstd = invstd_from_var ? 1.0f / sqrtf(second[c] + eps) : second[c];
    v[k] = (v[k] - mean[c]) * invstd * to_float(gamma[c]) + to_float(beta[c]);
    if (leaky && !(v[k] > 0.0f)) v[k] *= slope;
  }
  store_frag(y, p0, count, vec, v);
}

// sum(g) and sum(g * xhat) per channel.
template <class T>
struct LoadGradSums {
  const T* x;
  const T* g;
  const float* mean;
  const float* invstd;
  __device__ void operator()(Sums<2>& acc, int offset, int c, int, int) const {
    const float gv = to_float(g[offset]);
    acc.v[0] += gv;
    acc.v[1] += gv * (to_float(x[offset]) - mean[c]) * invstd[c];
  }
};

// sums[c] = sum(g), sums[C + c] = sum(g * xhat); also grad_beta and grad_gamma when asked for.
template <class P>
__global__ void batch_norm_grad_finish(int channels, int splits, const Sums<2>* partial, float* sums, P* grad_gamma,
                                       P* grad_beta) {
  const int c = warp_channel();
  if (c >= channels) return;  // whole warps
  double total[2];
  merge_sums<2>(partial, splits, channels, c, total);
  if (!warp_leader()) return;
  sums[c] = static_cast<float>(total[0]);
  sums[channels + c] = static_cast<float>(total[1]);
  if (grad_beta) grad_beta[c] = from_float<P>(static_cast<float>(total[0]));
  if (grad_gamma) grad_gamma[c] = from_float<P>(static_cast<float>(total[1]));
}

// grad_x = invstd * (gg - mean(gg) - xhat * mean(gg * xhat)) with gg = g * gamma.
template <class T, class P>
__global__ void batch_norm_grad_input(ActShape s, const T* x, const T* g, const float* mean, const float* invstd,
                                      const P* gamma, const float* sums, float inv_count, T* grad_x, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float vx[N], vg[N], out[N];
  load_frag(x, p0, count, vec, vx);
  load_frag(g, p0, count, vec, vg);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s)) {
    out[k] = 0.0f;
    if (p0 + k >= count) continue;
    const int c = pos.c;
    const float gamma_c = to_float(gamma[c]);
    const float xhat = (vx[k] - mean[c]) * invstd[c];
    const float mean_gg = sums[c] * gamma_c * inv_count;
    const float mean_gg_xhat = sums[s.c + c] * gamma_c * inv_count;
    out[k] = invstd[c] * (vg[k] * gamma_c - mean_gg - xhat * mean_gg_xhat);
  }
  store_frag(grad_x, p0, count, vec, out);
}

// batch_norm_act's backward reads the saved output y: z = y (y > 0) or y / slope, xhat =
// (z - beta) / gamma, dz = g (y > 0) or g * slope.
template <class T, class P>
struct AbnElement {
  const T* y;
  const T* g;
  const P* gamma;
  const P* beta;
  float slope;
  __device__ void operator()(int offset, int c, float& xhat, float& dz) const {
    of_values(to_float(y[offset]), to_float(g[offset]), c, xhat, dz);
  }
  // The same from y and g already loaded (a vectorised fragment).
  __device__ void of_values(float yv, float gv, int c, float& xhat, float& dz) const {
    const bool positive = yv > 0.0f;
    xhat = ((positive ? yv : yv / slope) - to_float(beta[c])) / to_float(gamma[c]);
    dz = positive ? gv : gv * slope;
  }
};

// sum(dz) and sum(dz * xhat) per channel.
template <class T, class P>
struct LoadAbnGradSums {
  AbnElement<T, P> e;
  __device__ void operator()(Sums<2>& acc, int offset, int c, int, int) const {
    float xhat, dz;
    e(offset, c, xhat, dz);
    acc.v[0] += dz;
    acc.v[1] += dz * xhat;
  }
};

// grad_x = gamma * invstd * (dz - mean(dz) - xhat * mean(dz * xhat)), a fragment of N
// consecutive elements per thread, so that their channels come from one decode (ActPosition);
// y, g and grad_x are read and written 16 bytes at a time where all three are aligned (`vec`),
// as batch_norm_grad_input does.
template <class T, class P>
__global__ void batch_norm_act_grad_input(ActShape s, AbnElement<T, P> e, const float* invstd, const float* sums,
                                          float inv_count, T* grad_x, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float vy[N], vg[N], out[N];
  load_frag(e.y, p0, count, vec, vy);
  load_frag(e.g, p0, count, vec, vg);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s)) {
    out[k] = 0.0f;
    if (p0 + k >= count) continue;
    const int c = pos.c;
    float xhat, dz;
    e.of_values(vy[k], vg[k], c, xhat, dz);
    const float a = to_float(e.gamma[c]) * invstd[c];
    out[k] = a * (dz - sums[c] * inv_count - xhat * sums[s.c + c] * inv_count);
  }
  store_frag(grad_x, p0, count, vec, out);
}

// Workspace regions: the chunk partials, then 2 * C floats of per-channel results.
template <class Acc>
int64_t partial_bytes(ActShape s) {
  return region_bytes<Acc>(static_cast<int64_t>(channel_reduce_plan(s).splits) * s.c);
}

}  // namespace

int64_t batch_norm_forward_workspace_bytes(ActShape shape, bool training) {
  if (!training) return 0;
  return partial_bytes<Welford<float>>(shape) + region_bytes<float>(2 * static_cast<int64_t>(shape.c));
}

int64_t batch_norm_backward_workspace_bytes(ActShape shape) {
  return partial_bytes<Sums<2>>(shape) + region_bytes<float>(2 * static_cast<int64_t>(shape.c));
}

void batch_norm_forward(DType dtype, const BatchNormForward& a, void* workspace, cudaStream_t stream) {
  const ActShape s = a.shape;
  if (s.numel() <= 0) return;
  dispatch_norm_params(dtype, a.param_dtype, [&](auto tag, auto param_tag) {
    using T = decltype(tag);
    using P = decltype(param_tag);
    const T* x = static_cast<const T*>(a.x);
    const bool vec = all_aligned16(a.x, a.y);
    if (!a.training) {
      CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, batch_norm_apply<T, P>)
      (s, x, a.running_mean, a.running_var, true, static_cast<float>(a.eps), static_cast<const P*>(a.gamma),
       static_cast<const P*>(a.beta), static_cast<T*>(a.y), vec, a.leaky, a.negative_slope);
      return;
    }
    if (static_cast<int64_t>(s.n) * s.s < 2)
      throw std::invalid_argument("cuda backend: batch_norm: training needs more than one value per channel");
    if (a.sums_in_saved) {
      if (!a.save_mean || !a.save_invstd)
        throw std::invalid_argument("cuda backend: batch_norm: the conv's sums need the saved statistics");
      CONVBENCH_LAUNCH(blocks_for(s.c), kThreads, 0, stream, batch_norm_stats_from_sums)
      (s.c, static_cast<double>(s.n) * s.s, a.save_mean, a.save_invstd, a.running_mean, a.running_var, a.eps,
       a.momentum);
      CONVBENCH_CUDA_CHECK_LAUNCH();
      CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, batch_norm_apply<T, P>)
      (s, x, a.save_mean, a.save_invstd, false, 0.0f, static_cast<const P*>(a.gamma), static_cast<const P*>(a.beta),
       static_cast<T*>(a.y), vec, a.leaky, a.negative_slope);
      return;
    }
    const ChannelReducePlan plan = channel_reduce_plan(s);
    auto* partial = static_cast<Welford<float>*>(workspace);
    float* stats = reinterpret_cast<float*>(static_cast<char*>(workspace) + partial_bytes<Welford<float>>(s));
    launch_channel_partials(s, plan, LoadWelford<T>{x}, partial, stream);
    CONVBENCH_LAUNCH(warp_merge_blocks(s.c), kThreads, 0, stream, batch_norm_stats_finish)
    (s.c, plan.splits, partial, stats, a.running_mean, a.running_var, a.save_mean, a.save_invstd, a.eps, a.momentum);
    CONVBENCH_CUDA_CHECK_LAUNCH();
    CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, batch_norm_apply<T, P>)
    (s, x, stats, stats + s.c, false, 0.0f, static_cast<const P*>(a.gamma), static_cast<const P*>(a.beta),
     static_cast<T*>(a.y), vec, a.leaky, a.negative_slope);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void batch_norm_backward(DType dtype, const BatchNormBackward& a, void* workspace, cudaStream_t stream) {
  const ActShape s = a.shape;
  if (s.numel() <= 0) return;
  dispatch_norm_params(dtype, a.param_dtype, [&](auto tag, auto param_tag) {
    using T = decltype(tag);
    using P = decltype(param_tag);
    const T* x = static_cast<const T*>(a.x);
    const T* g = static_cast<const T*>(a.g);
    const ChannelReducePlan plan = channel_reduce_plan(s);
    auto* partial = static_cast<Sums<2>*>(workspace);
    float* sums = reinterpret_cast<float*>(static_cast<char*>(workspace) + partial_bytes<Sums<2>>(s));
    launch_channel_partials(s, plan, LoadGradSums<T>{x, g, a.save_mean, a.save_invstd}, partial, stream);
    CONVBENCH_LAUNCH(warp_merge_blocks(s.c), kThreads, 0, stream, batch_norm_grad_finish<P>)
    (s.c, plan.splits, partial, sums, static_cast<P*>(a.grad_gamma), static_cast<P*>(a.grad_beta));
    CONVBENCH_CUDA_CHECK_LAUNCH();
    if (a.grad_x) {
      const float inv_count = static_cast<float>(1.0 / (static_cast<double>(s.n) * s.s));
      CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, batch_norm_grad_input<T, P>)
      (s, x, g, a.save_mean, a.save_invstd, static_cast<const P*>(a.gamma), sums, inv_count, static_cast<T*>(a.grad_x),
       all_aligned16(a.x, a.g, a.grad_x));
    }
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void batch_norm_act_backward(DType dtype, const BatchNormActBackward& a, void* workspace, cudaStream_t stream) {
  const ActShape s = a.shape;
  if (s.numel() <= 0) return;
  dispatch_norm_params(dtype, a.param_dtype, [&](auto tag, auto param_tag) {
    using T = decltype(tag);
    using P = decltype(param_tag);
    const AbnElement<T, P> e{static_cast<const T*>(a.y), static_cast<const T*>(a.g), static_cast<const P*>(a.gamma),
                             static_cast<const P*>(a.beta), a.negative_slope};
    const ChannelReducePlan plan = channel_reduce_plan(s);
    auto* partial = static_cast<Sums<2>*>(workspace);
    float* sums = reinterpret_cast<float*>(static_cast<char*>(workspace) + partial_bytes<Sums<2>>(s));
    launch_channel_partials(s, plan, LoadAbnGradSums<T, P>{e}, partial, stream);
    CONVBENCH_LAUNCH(warp_merge_blocks(s.c), kThreads, 0, stream, batch_norm_grad_finish<P>)
    (s.c, plan.splits, partial, sums, static_cast<P*>(a.grad_gamma), static_cast<P*>(a.grad_beta));
    CONVBENCH_CUDA_CHECK_LAUNCH();
    if (a.grad_x) {
      const float inv_count = static_cast<float>(1.0 / (static_cast<double>(s.n) * s.s));
      CONVBENCH_LAUNCH(frag_blocks<T>(s.numel()), kThreads, 0, stream, batch_norm_act_grad_input<T, P>)
      (s, e, a.save_invstd, sums, inv_count, static_cast<T*>(a.grad_x), all_aligned16(a.y, a.g, a.grad_x));
    }
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

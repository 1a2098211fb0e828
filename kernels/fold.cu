// Fold programs on the device (kernels.hpp "fold programs"): the same loops as the host's
// ops/fold_eval.cpp, one thread per element written. Kernels are tiny next to the conv they feed
// (a folded kernel has out x in x taps elements); plain float loops suffice. The registers are
// float; the weights, the kernel and their gradients are in the block's storage type.
#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

__device__ __forceinline__ int64_t at(const FoldReg& r, int64_t co, int64_t ci, int64_t a, int64_t b, int64_t c) {
  return (((co * r.ci + ci) * r.t0 + a) * r.t1 + b) * r.t2 + c;
}

__device__ __forceinline__ float src_value(const FoldReg& s, int64_t c1, int64_t c0, int64_t a, int64_t b, int64_t c) {
  if (s.k == nullptr) return (c1 == c0 && a == 0 && b == 0 && c == 0) ? 1.0f : 0.0f;  // the identity
  if (a < 0 || b < 0 || c < 0 || a >= s.t0 || b >= s.t1 || c >= s.t2) return 0.0f;
  return s.k[at(s, c1, c0, a, b, c)];
}

template <class T>
__global__ void compose_kernel(FoldConvGeometry g, FoldReg dst, FoldReg src, const T* w) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t n = dst.co * dst.ci * dst.t0 * dst.t1 * dst.t2;
  if (i >= n) return;
  const int64_t tc = i % dst.t2, tb = i / dst.t2 % dst.t1, ta = i / (dst.t2 * dst.t1) % dst.t0;
  const int64_t c0 = i / (dst.t2 * dst.t1 * dst.t0) % dst.ci, c2 = i / (dst.t2 * dst.t1 * dst.t0 * dst.ci);
  const int64_t per_group = g.src_channels / g.groups, out_per_group = dst.co / g.groups;
  const int64_t g0 = c2 / out_per_group * per_group, kq = g.k0 * g.k1 * g.k2;
  float sum = 0.0f;
  for (int64_t j = 0; j < per_group; ++j)
    for (int64_t q0 = 0; q0 < g.k0; ++q0)
      for (int64_t q1 = 0; q1 < g.k1; ++q1)
        for (int64_t q2 = 0; q2 < g.k2; ++q2) {
          const int64_t row = g0 + j + (src.k ? 0 : g.src_channel);
          const float v = src_value(src, row, c0, ta - g.s0 * q0, tb - g.s1 * q1, tc - g.s2 * q2);
          if (v != 0.0f) sum += to_float(w[(c2 * per_group + j) * kq + (q0 * g.k1 + q1) * g.k2 + q2]) * v;
        }
  dst.k[i] = sum;
}

template <class T>
__global__ void compose_bias_kernel(FoldConvGeometry g, FoldReg dst, FoldReg src, const T* w, const T* bias) {
  const int64_t c2 = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c2 >= dst.co) return;
  const int64_t per_group = g.src_channels / g.groups, out_per_group = dst.co / g.groups;
  const int64_t g0 = c2 / out_per_group * per_group, kq = g.k0 * g.k1 * g.k2;
  float sum = bias ? to_float(bias[c2]) : 0.0f;
  if (src.b)
    for (int64_t j = 0; j < per_group; ++j)
      for (int64_t q = 0; q < kq; ++q) sum += to_float(w[(c2 * per_group + j) * kq + q]) * src.b[g0 + j];
  dst.b[c2] = sum;
}

__global__ void accumulate_kernel(FoldReg dst, FoldReg src, float scale, int64_t src_channel, int64_t dst_channel,
                                  int64_t channels, int64_t sh0, int64_t sh1, int64_t sh2) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (src.k == nullptr) {  // the identity: one element per channel
    if (i >= channels) return;
    dst.k[at(dst, dst_channel + i, src_channel + i, sh0, sh1, sh2)] += scale;
    return;
  }
  const int64_t n = channels * src.ci * src.t0 * src.t1 * src.t2;
  if (i >= n) return;
  const int64_t tc = i % src.t2, tb = i / src.t2 % src.t1, ta = i / (src.t2 * src.t1) % src.t0;
  const int64_t c0 = i / (src.t2 * src.t1 * src.t0) % src.ci, c = i / (src.t2 * src.t1 * src.t0 * src.ci);
  dst.k[at(dst, dst_channel + c, c0, ta + sh0, tb + sh1, tc + sh2)] +=
      scale * src.k[at(src, src_channel + c, c0, ta, tb, tc)];
}

__global__ void accumulate_bias_kernel(FoldReg dst, FoldReg src, float scale, int64_t src_channel, int64_t dst_channel,
                                       int64_t channels) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  dst.b[dst_channel + c] += scale * src.b[src_channel + c];
}

template <class T>
__global__ void cut_kernel(FoldReg r, FoldCut cut, T* weight, bool scatter) {
  const int64_t per_group = r.ci / cut.groups, out_per_group = r.co / cut.groups;
  const int64_t kq = cut.kernel[0] * cut.kernel[1] * cut.kernel[2];
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= r.co * per_group * kq) return;
  const int64_t q = i % kq, j = i / kq % per_group, co = i / (kq * per_group);
  const int64_t q2 = q % cut.kernel[2], q1 = q / cut.kernel[2] % cut.kernel[1],
                q0 = q / (cut.kernel[2] * cut.kernel[1]);
  const int64_t g0 = co / out_per_group * per_group;
  const int64_t k = at(r, co, g0 + j, cut.first[0] + cut.dilation[0] * q0, cut.first[1] + cut.dilation[1] * q1,
                       cut.first[2] + cut.dilation[2] * q2);
  if (scatter)
    r.k[k] = to_float(weight[i]);
  else
    weight[i] = from_float<T>(r.k[k]);
}

// A bias between the float registers and the storage type: into storage, or out of it.
template <class T>
__global__ void bias_out_kernel(const float* from, T* to, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) to[i] = from_float<T>(from[i]);
}
template <class T>
__global__ void bias_in_kernel(const T* from, float* to, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) to[i] = to_float(from[i]);
}

__global__ void accumulate_backward_kernel(FoldReg gdst, FoldReg gsrc, float scale, int64_t src_channel,
                                           int64_t dst_channel, int64_t channels, int64_t sh0, int64_t sh1,
                                           int64_t sh2) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t n = channels * gsrc.ci * gsrc.t0 * gsrc.t1 * gsrc.t2;
  if (i >= n) return;
  const int64_t tc = i % gsrc.t2, tb = i / gsrc.t2 % gsrc.t1, ta = i / (gsrc.t2 * gsrc.t1) % gsrc.t0;
  const int64_t c0 = i / (gsrc.t2 * gsrc.t1 * gsrc.t0) % gsrc.ci, c = i / (gsrc.t2 * gsrc.t1 * gsrc.t0 * gsrc.ci);
  gsrc.k[at(gsrc, src_channel + c, c0, ta, tb, tc)] +=
      scale * gdst.k[at(gdst, dst_channel + c, c0, ta + sh0, tb + sh1, tc + sh2)];
}

__global__ void accumulate_bias_backward_kernel(FoldReg gdst, FoldReg gsrc, float scale, int64_t src_channel,
                                                int64_t dst_channel, int64_t channels) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  gsrc.b[src_channel + c] += scale * gdst.b[dst_channel + c];
}

// dw[c2][j][q] = sum over c0, t of gdst[c2][c0][s*q + t] src[g0 + j][c0][t] (+ gdst.b[c2] src.b[g0 + j]).
template <class T>
__global__ void compose_weight_grad_kernel(FoldConvGeometry g, FoldReg gdst, FoldReg src, T* dw) {
  const int64_t per_group = g.src_channels / g.groups, out_per_group = gdst.co / g.groups;
  const int64_t kq = g.k0 * g.k1 * g.k2;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= gdst.co * per_group * kq) return;
  const int64_t q = i % kq, j = i / kq % per_group, c2 = i / (kq * per_group);
  const int64_t q2 = q % g.k2, q1 = q / g.k2 % g.k1, q0 = q / (g.k2 * g.k1);
  const int64_t g0 = c2 / out_per_group * per_group;
  const int64_t o0 = g.s0 * q0, o1 = g.s1 * q1, o2 = g.s2 * q2;
  float sum = 0.0f;
  if (src.k == nullptr) {  // the identity: the one tap of input channel src_channel + g0 + j
    sum = gdst.k[at(gdst, c2, g.src_channel + g0 + j, o0, o1, o2)];
  } else {
    for (int64_t c0 = 0; c0 < src.ci; ++c0)
      for (int64_t a = 0; a < src.t0; ++a)
        for (int64_t b = 0; b < src.t1; ++b)
          for (int64_t c = 0; c < src.t2; ++c)
            sum += gdst.k[at(gdst, c2, c0, o0 + a, o1 + b, o2 + c)] * src.k[at(src, g0 + j, c0, a, b, c)];
    if (src.b && gdst.b) sum += gdst.b[c2] * src.b[g0 + j];
  }
  dw[i] = from_float<T>(sum);
}

// gsrc[c1][c0][t] += sum over c2 of c1's group, q of gdst[c2][c0][s*q + t] w[c2][c1 - g0][q].
template <class T>
__global__ void compose_source_grad_kernel(FoldConvGeometry g, FoldReg gdst, FoldReg gsrc, const T* w) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t n = gsrc.co * gsrc.ci * gsrc.t0 * gsrc.t1 * gsrc.t2;
  if (i >= n) return;
  const int64_t tc = i % gsrc.t2, tb = i / gsrc.t2 % gsrc.t1, ta = i / (gsrc.t2 * gsrc.t1) % gsrc.t0;
  const int64_t c0 = i / (gsrc.t2 * gsrc.t1 * gsrc.t0) % gsrc.ci, c1 = i / (gsrc.t2 * gsrc.t1 * gsrc.t0 * gsrc.ci);
  const int64_t per_group = g.src_channels / g.groups, out_per_group = gdst.co / g.groups;
  const int64_t grp = c1 / per_group, j = c1 % per_group, kq = g.k0 * g.k1 * g.k2;
  float sum = 0.0f;
  for (int64_t c2 = grp * out_per_group; c2 < (grp + 1) * out_per_group; ++c2)
    for (int64_t q0 = 0; q0 < g.k0; ++q0)
      for (int64_t q1 = 0; q1 < g.k1; ++q1)
        for (int64_t q2 = 0; q2 < g.k2; ++q2)
          sum += gdst.k[at(gdst, c2, c0, ta + g.s0 * q0, tb + g.s1 * q1, tc + g.s2 * q2)] *
                 to_float(w[(c2 * per_group + j) * kq + (q0 * g.k1 + q1) * g.k2 + q2]);
  gsrc.k[i] += sum;
}

template <class T>
__global__ void compose_source_bias_grad_kernel(FoldConvGeometry g, FoldReg gdst, FoldReg gsrc, const T* w) {
  const int64_t c1 = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c1 >= gsrc.co) return;
  const int64_t per_group = g.src_channels / g.groups, out_per_group = gdst.co / g.groups;
  const int64_t grp = c1 / per_group, j = c1 % per_group, kq = g.k0 * g.k1 * g.k2;
  float sum = 0.0f;
  for (int64_t c2 = grp * out_per_group; c2 < (grp + 1) * out_per_group; ++c2)
    for (int64_t q = 0; q < kq; ++q) sum += gdst.b[c2] * to_float(w[(c2 * per_group + j) * kq + q]);
  gsrc.b[c1] += sum;
}

int64_t kernel_elements(const FoldReg& r) { return r.co * r.ci * r.t0 * r.t1 * r.t2; }

}  // namespace

void fold_compose_forward(DType dtype, const FoldConvGeometry& g, FoldReg dst, FoldReg src, const void* w,
                          const void* bias, cudaStream_t stream) {
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(kernel_elements(dst)), kThreads, 0, stream, compose_kernel<T>)
    (g, dst, src, static_cast<const T*>(w));
    CONVBENCH_CUDA_CHECK_LAUNCH();
    if (dst.b) {
      CONVBENCH_LAUNCH(blocks_for(dst.co), kThreads, 0, stream, compose_bias_kernel<T>)
      (g, dst, src, static_cast<const T*>(w), static_cast<const T*>(bias));
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
  });
}

void fold_accumulate_forward(FoldReg dst, FoldReg src, float scale, int64_t src_channel, int64_t dst_channel,
                             int64_t channels, const int64_t shift[3], cudaStream_t stream) {
  const int64_t n = src.k ? channels * src.ci * src.t0 * src.t1 * src.t2 : channels;
  CONVBENCH_LAUNCH(blocks_for(n), kThreads, 0, stream, accumulate_kernel)
  (dst, src, scale, src_channel, dst_channel, channels, shift[0], shift[1], shift[2]);
  CONVBENCH_CUDA_CHECK_LAUNCH();
  if (src.k && src.b) {
    CONVBENCH_LAUNCH(blocks_for(channels), kThreads, 0, stream, accumulate_bias_kernel)
    (dst, src, scale, src_channel, dst_channel, channels);
    CONVBENCH_CUDA_CHECK_LAUNCH();
  }
}

void fold_cut(DType dtype, FoldReg r, const FoldCut& cut, void* weight, void* bias, bool scatter, cudaStream_t stream) {
  const int64_t n = r.co * (r.ci / cut.groups) * cut.kernel[0] * cut.kernel[1] * cut.kernel[2];
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(n), kThreads, 0, stream, cut_kernel<T>)(r, cut, static_cast<T*>(weight), scatter);
    CONVBENCH_CUDA_CHECK_LAUNCH();
    if (r.b && bias) {
      if (scatter) {
        CONVBENCH_LAUNCH(blocks_for(r.co), kThreads, 0, stream, bias_in_kernel<T>)
        (static_cast<const T*>(bias), r.b, r.co);
      } else {
        CONVBENCH_LAUNCH(blocks_for(r.co), kThreads, 0, stream, bias_out_kernel<T>)
        (r.b, static_cast<T*>(bias), r.co);
      }
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
  });
}

void fold_accumulate_backward(FoldReg gdst, FoldReg gsrc, float scale, int64_t src_channel, int64_t dst_channel,
                              int64_t channels, const int64_t shift[3], cudaStream_t stream) {
  if (gsrc.k == nullptr) return;  // the identity has no parameters
  CONVBENCH_LAUNCH(blocks_for(channels * gsrc.ci * gsrc.t0 * gsrc.t1 * gsrc.t2), kThreads, 0, stream,
                   accumulate_backward_kernel)
  (gdst, gsrc, scale, src_channel, dst_channel, channels, shift[0], shift[1], shift[2]);
  CONVBENCH_CUDA_CHECK_LAUNCH();
  if (gsrc.b && gdst.b) {
    CONVBENCH_LAUNCH(blocks_for(channels), kThreads, 0, stream, accumulate_bias_backward_kernel)
    (gdst, gsrc, scale, src_channel, dst_channel, channels);
    CONVBENCH_CUDA_CHECK_LAUNCH();
  }
}

void fold_compose_backward(DType dtype, const FoldConvGeometry& g, FoldReg gdst, FoldReg src, FoldReg gsrc,
                           const void* w, void* dw, void* dbias, cudaStream_t stream) {
  const int64_t kq = g.k0 * g.k1 * g.k2;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* wt = static_cast<const T*>(w);
    CONVBENCH_LAUNCH(blocks_for(gdst.co * (g.src_channels / g.groups) * kq), kThreads, 0, stream,
                     compose_weight_grad_kernel<T>)
    (g, gdst, src, static_cast<T*>(dw));
    CONVBENCH_CUDA_CHECK_LAUNCH();
    if (dbias && gdst.b) {
      CONVBENCH_LAUNCH(blocks_for(gdst.co), kThreads, 0, stream, bias_out_kernel<T>)
      (gdst.b, static_cast<T*>(dbias), gdst.co);
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
    if (gsrc.k == nullptr) return;
    CONVBENCH_LAUNCH(blocks_for(kernel_elements(gsrc)), kThreads, 0, stream, compose_source_grad_kernel<T>)
    (g, gdst, gsrc, wt);
    CONVBENCH_CUDA_CHECK_LAUNCH();
    if (gsrc.b && gdst.b) {
      CONVBENCH_LAUNCH(blocks_for(gsrc.co), kThreads, 0, stream, compose_source_bias_grad_kernel<T>)(g, gdst, gsrc, wt);
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace convbench::kernels

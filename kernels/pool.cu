// Max and average pooling, forward and backward, as the reference backend (PyTorch's defaults:
// ceil_mode=False, count_include_pad=True, zero-sized padding that never wins a maximum).
//
// Forward: one thread per output element. Backward: one thread per input element gathers from
// the windows that cover it, so no atomics and no zero-filling are needed and the result does
// not depend on scheduling.
#include <cmath>

#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

// The first maximum of window `o` (flat output position) of plane (n, c), in window order
// (kd, kh, kw); a NaN wins (the last one), padding never does. Returns the flat input position,
// -1 when the window lies entirely in the padding.
template <class T>
__device__ int window_argmax(const PoolShape& s, const T* x, int n, int c, int o, float& best) {
  const int in_size = volume(s.in);
  const int od = o / (s.out[1] * s.out[2]), oh = o / s.out[2] % s.out[1], ow = o % s.out[2];
  best = -INFINITY;
  int best_at = -1;
  for (int kd = 0; kd < s.kernel[0]; ++kd) {
    const int id = od * s.stride[0] - s.padding[0] + kd;
    if (id < 0 || id >= s.in[0]) continue;
    for (int kh = 0; kh < s.kernel[1]; ++kh) {
      const int ih = oh * s.stride[1] - s.padding[1] + kh;
      if (ih < 0 || ih >= s.in[1]) continue;
      for (int kw = 0; kw < s.kernel[2]; ++kw) {
        const int iw = ow * s.stride[2] - s.padding[2] + kw;
        if (iw < 0 || iw >= s.in[2]) continue;
        const int i = (id * s.in[1] + ih) * s.in[2] + iw;
        const float v = to_float(x[position(s, n, c, i, in_size)]);
        if (best_at < 0) best_at = i;  // the first tap, in case every value is -inf
        if (v > best || isnan(v)) {
          best = v;
          best_at = i;
        }
      }
    }
  }
  return best_at;
}

template <class T>
__global__ void max_pool_forward_kernel(PoolShape s, const T* x, T* y, int64_t* indices) {
  const int out_size = volume(s.out);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(s.n) * s.c * out_size) return;
  const int p = static_cast<int>(i);
  int n, c, o;
  decode(s, p, out_size, n, c, o);
  float best;
  const int at = window_argmax(s, x, n, c, o, best);
  y[p] = from_float<T>(best);
  if (indices) indices[p] = at;
}

// The output windows that contain input position (id, ih, iw): calls f(flat output position)
// in window order of the taps.
template <class F>
__device__ __forceinline__ void for_each_covering_window(const PoolShape& s, int id, int ih, int iw, F f) {
  for (int kd = 0; kd < s.kernel[0]; ++kd) {
    const int td = id + s.padding[0] - kd;
    if (td < 0 || td % s.stride[0] != 0 || td / s.stride[0] >= s.out[0]) continue;
    for (int kh = 0; kh < s.kernel[1]; ++kh) {
      const int th = ih + s.padding[1] - kh;
      if (th < 0 || th % s.stride[1] != 0 || th / s.stride[1] >= s.out[1]) continue;
      for (int kw = 0; kw < s.kernel[2]; ++kw) {
        const int tw = iw + s.padding[2] - kw;
        if (tw < 0 || tw % s.stride[2] != 0 || tw / s.stride[2] >= s.out[2]) continue;
        f(((td / s.stride[0]) * s.out[1] + th / s.stride[1]) * s.out[2] + tw / s.stride[2]);
      }
    }
  }
}

template <class T>
__global__ void max_pool_backward_kernel(PoolShape s, const T* g, const int64_t* indices, const T* x, T* grad_x) {
  const int in_size = volume(s.in), out_size = volume(s.out);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.c * in_size) return;
  const int p = static_cast<int>(idx);
  int n, c, i;
  decode(s, p, in_size, n, c, i);
  const int id = i / (s.in[1] * s.in[2]), ih = i / s.in[2] % s.in[1], iw = i % s.in[2];
  float sum = 0.0f;
  for_each_covering_window(s, id, ih, iw, [&](int o) {
    const int q = position(s, n, c, o, out_size);
    float unused;
    const int64_t at = indices ? indices[q] : window_argmax(s, x, n, c, o, unused);
    if (at == i) sum += to_float(g[q]);
  });
  grad_x[p] = from_float<T>(sum);
}

template <class T>
__global__ void avg_pool_forward_kernel(PoolShape s, const T* x, T* y, float inv_divisor) {
  const int in_size = volume(s.in), out_size = volume(s.out);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.c * out_size) return;
  const int p = static_cast<int>(idx);
  int n, c, o;
  decode(s, p, out_size, n, c, o);
  const int od = o / (s.out[1] * s.out[2]), oh = o / s.out[2] % s.out[1], ow = o % s.out[2];
  float sum = 0.0f;
  for (int kd = 0; kd < s.kernel[0]; ++kd) {
    const int id = od * s.stride[0] - s.padding[0] + kd;
    if (id < 0 || id >= s.in[0]) continue;
    for (int kh = 0; kh < s.kernel[1]; ++kh) {
      const int ih = oh * s.stride[1] - s.padding[1] + kh;
      if (ih < 0 || ih >= s.in[1]) continue;
      for (int kw = 0; kw < s.kernel[2]; ++kw) {
        const int iw = ow * s.stride[2] - s.padding[2] + kw;
        if (iw < 0 || iw >= s.in[2]) continue;
        sum += to_float(x[position(s, n, c, (id * s.in[1] + ih) * s.in[2] + iw, in_size)]);
      }
    }
  }
  y[p] = from_float<T>(sum * inv_divisor);
}

template <class T>
__global__ void avg_pool_backward_kernel(PoolShape s, const T* g, T* grad_x, float inv_divisor) {
  const int in_size = volume(s.in), out_size = volume(s.out);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.c * in_size) return;
  const int p = static_cast<int>(idx);
  int n, c, i;
  decode(s, p, in_size, n, c, i);
  const int id = i / (s.in[1] * s.in[2]), ih = i / s.in[2] % s.in[1], iw = i % s.in[2];
  float sum = 0.0f;
  for_each_covering_window(s, id, ih, iw, [&](int o) { sum += to_float(g[position(s, n, c, o, out_size)]); });
  grad_x[p] = from_float<T>(sum * inv_divisor);
}

int64_t count(const PoolShape& s, const Dims3& d) { return static_cast<int64_t>(s.n) * s.c * d[0] * d[1] * d[2]; }
float inverse_volume(const Dims3& k) { return static_cast<float>(1.0 / (static_cast<double>(k[0]) * k[1] * k[2])); }

}  // namespace

void max_pool_forward(DType dtype, const PoolShape& s, const void* x, void* y, int64_t* indices, cudaStream_t stream) {
  if (count(s, s.out) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count(s, s.out)), kThreads, 0, stream, max_pool_forward_kernel<T>)
    (s, static_cast<const T*>(x), static_cast<T*>(y), indices);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void max_pool_backward(DType dtype, const PoolShape& s, const void* g, const int64_t* indices, const void* x,
                       void* grad_x, cudaStream_t stream) {
  if (count(s, s.in) <= 0) return;
  if (!indices && !x) throw std::invalid_argument("cuda kernels: max_pool backward needs the indices or the input");
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count(s, s.in)), kThreads, 0, stream, max_pool_backward_kernel<T>)
    (s, static_cast<const T*>(g), indices, static_cast<const T*>(x), static_cast<T*>(grad_x));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void avg_pool_forward(DType dtype, const PoolShape& s, const void* x, void* y, cudaStream_t stream) {
  if (count(s, s.out) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count(s, s.out)), kThreads, 0, stream, avg_pool_forward_kernel<T>)
    (s, static_cast<const T*>(x), static_cast<T*>(y), inverse_volume(s.kernel));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void avg_pool_backward(DType dtype, const PoolShape& s, const void* g, void* grad_x, cudaStream_t stream) {
  if (count(s, s.in) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count(s, s.in)), kThreads, 0, stream, avg_pool_backward_kernel<T>)
    (s, static_cast<const T*>(g), static_cast<T*>(grad_x), inverse_volume(s.kernel));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

// ---- global average pooling --------------------------------------------------------------

namespace {

// One block per (n, c) plane: its threads stride over the plane's positions and block_sum adds
// their partial sums in a fixed order.
template <class T>
__global__ void global_avg_pool_forward_kernel(ActShape s, const T* x, T* y) {
  __shared__ float scratch[32];
  const int plane = blockIdx.x, n = plane / s.c, c = plane % s.c;
  float sum = 0.0f;
  for (int sp = threadIdx.x; sp < s.s; sp += blockDim.x) sum += to_float(x[offset_of(n, c, sp, s)]);
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) y[plane] = from_float<T>(sum / static_cast<float>(s.s));
}

template <class T>
__global__ void global_avg_pool_backward_kernel(ActShape s, const T* g, T* grad_x) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.numel())) return;
  const int p = static_cast<int>(idx);
  int n, c, sp;
  decode(s, p, s.s, n, c, sp);
  grad_x[p] = from_float<T>(to_float(g[n * s.c + c]) / static_cast<float>(s.s));
}

}  // namespace

void global_avg_pool_forward(DType dtype, ActShape s, const void* x, void* y, cudaStream_t stream) {
  if (s.numel() <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(static_cast<unsigned>(s.n * s.c), kThreads, 0, stream, global_avg_pool_forward_kernel<T>)
    (s, static_cast<const T*>(x), static_cast<T*>(y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void global_avg_pool_backward(DType dtype, ActShape s, const void* g, void* grad_x, cudaStream_t stream) {
  if (s.numel() <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(s.numel()), kThreads, 0, stream, global_avg_pool_backward_kernel<T>)
    (s, static_cast<const T*>(g), static_cast<T*>(grad_x));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

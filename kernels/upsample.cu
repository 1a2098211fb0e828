// Upsampling, forward and backward, as the reference. Nearest neighbour by an integer scale:
// output position o reads input position o / scale along every spatial dim, and each input
// position's gradient is the sum over the block of outputs that read it. Linear: each output
// mixes the 2^d input positions around its source coordinate; backward scatters with atomicAdd.
#include "kernels/common.cuh"
#include "ops/upsample_taps.hpp"

namespace convbench::kernels {
namespace {

template <class T>
__global__ void upsample_forward_kernel(UpsampleShape s, const T* x, T* y) {
  const int in_size = volume(s.in), out_size = volume(s.out);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.c * out_size) return;
  const int p = static_cast<int>(idx);
  int n, c, o;
  decode(s, p, out_size, n, c, o);
  const int od = o / (s.out[1] * s.out[2]), oh = o / s.out[2] % s.out[1], ow = o % s.out[2];
  const int i = upsample_nearest_source(od, oh, ow, s.in[1], s.in[2], s.scale);
  y[p] = x[position(s, n, c, i, in_size)];
}

template <class T>
__global__ void upsample_backward_kernel(UpsampleShape s, const T* g, T* grad_x) {
  const int in_size = volume(s.in), out_size = volume(s.out);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.c * in_size) return;
  const int p = static_cast<int>(idx);
  int n, c, i;
  decode(s, p, in_size, n, c, i);
  const int id = i / (s.in[1] * s.in[2]), ih = i / s.in[2] % s.in[1], iw = i % s.in[2];
  float sum = 0.0f;
  // Output positions [i * scale, (i + 1) * scale) along each dim (a 2-D tensor's depth is 1 on
  // both sides, so its block has depth 1).
  for (int od = id * s.scale; od < min((id + 1) * s.scale, s.out[0]); ++od)
    for (int oh = ih * s.scale; oh < min((ih + 1) * s.scale, s.out[1]); ++oh)
      for (int ow = iw * s.scale; ow < min((iw + 1) * s.scale, s.out[2]); ++ow)
        sum += to_float(g[position(s, n, c, (od * s.out[1] + oh) * s.out[2] + ow, out_size)]);
  grad_x[p] = from_float<T>(sum);
}

// Along one dim, output position o reads input positions i0 and i1 with weights w0 and w1, in
// float (ops/upsample_taps.hpp).
using LinearTap = UpsampleTap<float, int>;

// Calls f(flat input position, weight) for the corners of output position o with a nonzero
// weight (a 2-D tensor's depth has one tap).
template <class F>
__device__ __forceinline__ void for_each_corner(const UpsampleShape& s, int o, F f) {
  const LinearTap a = upsample_linear_tap<float>(s.in[0], s.out[0], o / (s.out[1] * s.out[2]), s.align_corners);
  const LinearTap b = upsample_linear_tap<float>(s.in[1], s.out[1], o / s.out[2] % s.out[1], s.align_corners);
  const LinearTap c = upsample_linear_tap<float>(s.in[2], s.out[2], o % s.out[2], s.align_corners);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float weight = (i & 4 ? a.w1 : a.w0) * (i & 2 ? b.w1 : b.w0) * (i & 1 ? c.w1 : c.w0);
    if (weight == 0.0f) continue;
    const int d = i & 4 ? a.i1 : a.i0, h = i & 2 ? b.i1 : b.i0, w = i & 1 ? c.i1 : c.i0;
    f((d * s.in[1] + h) * s.in[2] + w, weight);
  }
}

template <class T>
__global__ void upsample_linear_forward_kernel(UpsampleShape s, const T* x, T* y) {
  const int in_size = volume(s.in), out_size = volume(s.out);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.c * out_size) return;
  const int p = static_cast<int>(idx);
  int n, c, o;
  decode(s, p, out_size, n, c, o);
  float sum = 0.0f;
  for_each_corner(s, o, [&](int i, float weight) { sum += weight * to_float(x[position(s, n, c, i, in_size)]); });
  y[p] = from_float<T>(sum);
}

// One thread per output element scatters its gradient into the float accumulator `acc`, which
// has grad_x's layout.
template <class T>
__global__ void upsample_linear_scatter_kernel(UpsampleShape s, const T* g, float* acc) {
  const int in_size = volume(s.in), out_size = volume(s.out);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.c * out_size) return;
  const int p = static_cast<int>(idx);
  int n, c, o;
  decode(s, p, out_size, n, c, o);
  const float gv = to_float(g[p]);
  for_each_corner(s, o, [&](int i, float weight) { atomicAdd(acc + position(s, n, c, i, in_size), weight * gv); });
}

template <class T>
__global__ void float_to_storage_kernel(const float* acc, T* out, int64_t count) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < count) out[idx] = from_float<T>(acc[idx]);
}

int64_t count(const UpsampleShape& s, const Dims3& d) { return static_cast<int64_t>(s.n) * s.c * d[0] * d[1] * d[2]; }

}  // namespace

void upsample_forward(DType dtype, const UpsampleShape& s, const void* x, void* y, cudaStream_t stream) {
  if (count(s, s.out) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count(s, s.out)), kThreads, 0, stream, upsample_forward_kernel<T>)
    (s, static_cast<const T*>(x), static_cast<T*>(y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void upsample_backward(DType dtype, const UpsampleShape& s, const void* g, void* grad_x, cudaStream_t stream) {
  if (count(s, s.in) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count(s, s.in)), kThreads, 0, stream, upsample_backward_kernel<T>)
    (s, static_cast<const T*>(g), static_cast<T*>(grad_x));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void upsample_linear_forward(DType dtype, const UpsampleShape& s, const void* x, void* y, cudaStream_t stream) {
  if (count(s, s.out) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count(s, s.out)), kThreads, 0, stream, upsample_linear_forward_kernel<T>)
    (s, static_cast<const T*>(x), static_cast<T*>(y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

int64_t upsample_linear_backward_workspace_bytes(const UpsampleShape& s) { return region_bytes<float>(count(s, s.in)); }

void upsample_linear_backward(DType dtype, const UpsampleShape& s, const void* g, void* grad_x, void* workspace,
                              cudaStream_t stream) {
  const int64_t in_count = count(s, s.in);
  if (in_count <= 0) return;
  if (workspace == nullptr) throw std::invalid_argument("upsample_linear_backward: no workspace");
  float* acc = static_cast<float*>(workspace);
  CONVBENCH_CUDA_CHECK(cudaMemsetAsync(acc, 0, static_cast<size_t>(in_count) * sizeof(float), stream));
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (count(s, s.out) > 0) {
      CONVBENCH_LAUNCH(blocks_for(count(s, s.out)), kThreads, 0, stream, upsample_linear_scatter_kernel<T>)
      (s, static_cast<const T*>(g), acc);
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
    CONVBENCH_LAUNCH(blocks_for(in_count), kThreads, 0, stream, float_to_storage_kernel<T>)
    (acc, static_cast<T*>(grad_x), in_count);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

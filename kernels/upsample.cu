// Nearest-neighbour upsampling by an integer scale, forward and backward, as the reference:
// output position o reads input position o / scale along every spatial dim, and each input
// position's gradient is the sum over the block of outputs that read it.
#include "kernels/common.cuh"

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
  const int i = ((od / s.scale) * s.in[1] + oh / s.scale) * s.in[2] + ow / s.scale;
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

int64_t count(const UpsampleShape& s, const Dims3& d) { return static_cast<int64_t>(s.n) * s.c * d[0] * d[1] * d[2]; }

}  // namespace

void upsample_forward(DType dtype, const UpsampleShape& s, const void* x, void* y, cudaStream_t stream) {
  if (count(s, s.out) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    upsample_forward_kernel<T>
        <<<blocks_for(count(s, s.out)), kThreads, 0, stream>>>(s, static_cast<const T*>(x), static_cast<T*>(y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void upsample_backward(DType dtype, const UpsampleShape& s, const void* g, void* grad_x, cudaStream_t stream) {
  if (count(s, s.in) <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    upsample_backward_kernel<T>
        <<<blocks_for(count(s, s.in)), kThreads, 0, stream>>>(s, static_cast<const T*>(g), static_cast<T*>(grad_x));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

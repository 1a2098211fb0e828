// mul: out = a * b, b either a's shape or (N, C, 1, ...) broadcast over space (one value per
// (n, c), stored alike in both layouts), and its backward: grad_a = g * b, grad_b = g * a, summed
// over space for a broadcast b (one block per (n, c), a fixed-order block sum: deterministic).
#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

// One thread per element of x (memory order): out = x * y, y indexed as b.
template <class T>
__global__ void mul_kernel(ActShape s, bool broadcast, const T* x, const T* y, T* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(s.numel())) return;
  const int p = static_cast<int>(i);
  int yi = p;
  if (broadcast) {
    int n, c, sp;
    decode(s, p, s.s, n, c, sp);
    yi = n * s.c + c;
  }
  out[p] = from_float<T>(to_float(x[p]) * to_float(y[yi]));
}

// Block (n * C + c): grad_b[n, c] = sum over space of g * a.
template <class T>
__global__ void mul_grad_b_broadcast_kernel(ActShape s, const T* g, const T* a, T* grad_b) {
  __shared__ float scratch[32];
  const int nc = blockIdx.x, n = nc / s.c, c = nc % s.c;
  float sum = 0.0f;
  for (int sp = threadIdx.x; sp < s.s; sp += blockDim.x) {
    const int p = offset_of(n, c, sp, s);
    sum += to_float(g[p]) * to_float(a[p]);
  }
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) grad_b[nc] = from_float<T>(sum);
}

}  // namespace

void mul(DType dtype, ActShape shape, bool broadcast, const void* x, const void* y, void* out, cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  dispatch_float(dtype, [&](auto t) {
    using T = decltype(t);
    mul_kernel<T><<<blocks_for(shape.numel()), kThreads, 0, stream>>>(shape, broadcast, static_cast<const T*>(x),
                                                                      static_cast<const T*>(y), static_cast<T*>(out));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void mul_grad_b_broadcast(DType dtype, ActShape shape, const void* g, const void* a, void* grad_b,
                          cudaStream_t stream) {
  if (shape.n * shape.c <= 0) return;
  dispatch_float(dtype, [&](auto t) {
    using T = decltype(t);
    mul_grad_b_broadcast_kernel<T><<<static_cast<unsigned>(shape.n * shape.c), kThreads, 0, stream>>>(
        shape, static_cast<const T*>(g), static_cast<const T*>(a), static_cast<T*>(grad_b));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

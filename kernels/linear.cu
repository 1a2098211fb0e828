// The linear op (a classifier head): y = x W^T + b on activations whose spatial sizes are 1, so
// that both layouts store x as the row-major (N, in) matrix and y as (N, out). One thread per
// result element with a float accumulator: plain and correct, and uncoalesced (neighbouring
// threads read weight rows `in` apart). The backend runs the products in cuBLAS where the build
// has it (`--linear`, lib/backends/cuda/cublas_linear.hpp); these kernels are the other path, and
// always compute the bias gradient.
#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

// y[n, o] = sum_i x[n, i] w[o, i] (+ bias[o]).
template <class T>
__global__ void linear_forward_kernel(LinearShape s, const T* x, const T* w, const T* bias, T* y) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.out) return;
  const int n = static_cast<int>(idx / s.out), o = static_cast<int>(idx % s.out);
  float sum = bias ? to_float(bias[o]) : 0.0f;
  for (int i = 0; i < s.in; ++i)
    sum += to_float(x[static_cast<int64_t>(n) * s.in + i]) * to_float(w[static_cast<int64_t>(o) * s.in + i]);
  y[idx] = from_float<T>(sum);
}

// grad_x[n, i] = sum_o g[n, o] w[o, i].
template <class T>
__global__ void linear_grad_input_kernel(LinearShape s, const T* g, const T* w, T* grad_x) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.n) * s.in) return;
  const int n = static_cast<int>(idx / s.in), i = static_cast<int>(idx % s.in);
  float sum = 0.0f;
  for (int o = 0; o < s.out; ++o)
    sum += to_float(g[static_cast<int64_t>(n) * s.out + o]) * to_float(w[static_cast<int64_t>(o) * s.in + i]);
  grad_x[idx] = from_float<T>(sum);
}

// grad_w[o, i] = sum_n g[n, o] x[n, i].
template <class T>
__global__ void linear_grad_weight_kernel(LinearShape s, const T* g, const T* x, T* grad_w) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<int64_t>(s.out) * s.in) return;
  const int o = static_cast<int>(idx / s.in), i = static_cast<int>(idx % s.in);
  float sum = 0.0f;
  for (int n = 0; n < s.n; ++n)
    sum += to_float(g[static_cast<int64_t>(n) * s.out + o]) * to_float(x[static_cast<int64_t>(n) * s.in + i]);
  grad_w[idx] = from_float<T>(sum);
}

// grad_b[o] = sum_n g[n, o].
template <class T>
__global__ void linear_grad_bias_kernel(LinearShape s, const T* g, T* grad_b) {
  const int o = static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= s.out) return;
  float sum = 0.0f;
  for (int n = 0; n < s.n; ++n) sum += to_float(g[static_cast<int64_t>(n) * s.out + o]);
  grad_b[o] = from_float<T>(sum);
}

}  // namespace

void linear_forward(DType dtype, LinearShape s, const void* x, const void* w, const void* bias, void* y,
                    cudaStream_t stream) {
  const int64_t count = static_cast<int64_t>(s.n) * s.out;
  if (count <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, linear_forward_kernel<T>)
    (s, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias), static_cast<T*>(y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void linear_backward(DType dtype, LinearShape s, const void* x, const void* w, const void* g, void* grad_x,
                     void* grad_w, void* grad_b, cudaStream_t stream) {
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* gt = static_cast<const T*>(g);
    if (grad_x && s.n > 0 && s.in > 0) {
      CONVBENCH_LAUNCH(blocks_for(static_cast<int64_t>(s.n) * s.in), kThreads, 0, stream, linear_grad_input_kernel<T>)
      (s, gt, static_cast<const T*>(w), static_cast<T*>(grad_x));
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
    if (grad_w && s.out > 0 && s.in > 0) {
      CONVBENCH_LAUNCH(blocks_for(static_cast<int64_t>(s.out) * s.in), kThreads, 0, stream,
                       linear_grad_weight_kernel<T>)
      (s, gt, static_cast<const T*>(x), static_cast<T*>(grad_w));
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
    if (grad_b && s.out > 0) {
      CONVBENCH_LAUNCH(blocks_for(s.out), kThreads, 0, stream, linear_grad_bias_kernel<T>)
      (s, gt, static_cast<T*>(grad_b));
      CONVBENCH_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace convbench::kernels

// Mixed precision's elementwise kernels (variants/autocast_graph.hpp, runtime/loss_scaler.hpp):
// autocast's casts between float32, float16 and bfloat16, and GradScaler's loss scaling. Every
// kernel works in memory order (a cast keeps the layout), one thread per element: the tensors
// are autocast's cast points and the step's gradients, read once and written once.
#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

// Through float, exactly as PyTorch's .to() rounds: float16 and bfloat16 widen to float without
// loss, and float narrows to nearest even.
template <class From, class To>
__global__ void cast_kernel(const From* src, To* dst, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = from_float<To>(to_float(src[i]));
}

// The factor is a power of two (GradScaler's scale), so the product is exact in float and only
// the store rounds, as the host backends' double product does.
template <class T>
__global__ void scale_kernel(const T* in, T* out, float factor, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = from_float<T>(to_float(in[i]) * factor);
}

// torch._amp_foreach_non_finite_check_and_unscale_: t *= inverse, found_inf = 1 when an element
// was inf or NaN (many threads may store the same 1).
__global__ void unscale_kernel(float* t, float inverse, float* found_inf, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float v = t[i];
  if (!isfinite(v)) *found_inf = 1.0f;
  t[i] = v * inverse;
}

}  // namespace

void cast(DType from, DType to, int64_t count, const void* src, void* dst, cudaStream_t stream) {
  if (count <= 0) return;
  dispatch_float(from, [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_float(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      cast_kernel<From, To>
          <<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const From*>(src), static_cast<To*>(dst), count);
    });
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void scale(DType dtype, int64_t count, const void* in, void* out, float factor, cudaStream_t stream) {
  if (count <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    scale_kernel<T>
        <<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), factor, count);
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void unscale(int64_t count, float* t, float inverse, float* found_inf, cudaStream_t stream) {
  if (count <= 0) return;
  unscale_kernel<<<blocks_for(count), kThreads, 0, stream>>>(t, inverse, found_inf, count);
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

// Mixed precision's casts (variants/autocast_graph.hpp): between float32, float16 and bfloat16, in
// memory order (a cast keeps the layout), one thread per element, as the two sides' element sizes
// differ (GradScaler's scale and unscale are elementwise.cu's unary kernels).
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

}  // namespace

void cast(DType from, DType to, int64_t count, const void* src, void* dst, cudaStream_t stream) {
  if (count <= 0) return;
  dispatch_float(from, [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_float(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, cast_kernel<From, To>)
      (static_cast<const From*>(src), static_cast<To*>(dst), count);
    });
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

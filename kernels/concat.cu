// Concatenation along channels and its backward (the split): a part (N, C_part, S) is copied to
// or from channels [offset, offset + C_part) of the whole (N, C_whole, S). Bytes are moved as
// they are, so one kernel per element size serves every dtype.
#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

enum class Direction { part_to_whole, whole_to_part };

// One thread per element of the part, in the part's memory order; in either layout, runs of
// neighbouring threads touch neighbouring addresses on both sides.
template <class E>
__global__ void concat_kernel(ActShape part, int whole_channels, int offset, const E* src, E* dst, Direction dir) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(part.numel())) return;
  const int p = static_cast<int>(i);
  int w;
  if (part.channels_last) {
    const int c = p % part.c, ns = p / part.c;
    w = ns * whole_channels + offset + c;
  } else {
    const int sp = p % part.s, nc = p / part.s, c = nc % part.c, n = nc / part.c;
    w = (n * whole_channels + offset + c) * part.s + sp;
  }
  if (dir == Direction::part_to_whole)
    dst[w] = src[p];
  else
    dst[p] = src[w];
}

void launch(DType dtype, ActShape part, int whole_channels, int offset, const void* src, void* dst, Direction dir,
            cudaStream_t stream) {
  if (part.numel() <= 0) return;
  const unsigned blocks = blocks_for(part.numel());
  switch (element_bytes(dtype)) {
    case 4:
      CONVBENCH_LAUNCH(blocks, kThreads, 0, stream, concat_kernel<uint32_t>)
      (part, whole_channels, offset, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), dir);
      break;
    case 2:
      CONVBENCH_LAUNCH(blocks, kThreads, 0, stream, concat_kernel<uint16_t>)
      (part, whole_channels, offset, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), dir);
      break;
    default: throw std::invalid_argument("cuda kernels: concat of " + std::string(to_string(dtype)));
  }
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace

void concat_copy_in(DType dtype, ActShape part, int whole_channels, int offset, const void* src, void* whole,
                    cudaStream_t stream) {
  launch(dtype, part, whole_channels, offset, src, whole, Direction::part_to_whole, stream);
}

void concat_copy_out(DType dtype, ActShape part, int whole_channels, int offset, const void* whole, void* dst,
                     cudaStream_t stream) {
  launch(dtype, part, whole_channels, offset, whole, dst, Direction::whole_to_part, stream);
}

}  // namespace convbench::kernels

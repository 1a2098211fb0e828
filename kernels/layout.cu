// Data movement the CUDA backend's convolutions need around cuDNN: memory-order conversion
// between channels-first (N, C, spatial) and channels-last (N, spatial, C) for conv weights
// stored channels-first when the activations are channels-last (cuDNN takes filters in the
// activations' order), and zero-padding / cropping at the end of the spatial dims for transposed
// convs whose output_padding reaches the stride (see ConvProblem in conv_problem.hpp); and the
// space_to_depth and channel_shuffle permutations.
#include "kernels/common.cuh"

namespace convbench::kernels {
namespace {

// One thread per destination element (coalesced writes).
template <class E>
__global__ void convert_layout_kernel(ActShape src_shape, const E* src, E* dst) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(src_shape.numel())) return;
  const int p = static_cast<int>(i);
  const ActShape& s = src_shape;
  int n, c, sp;
  if (s.channels_last) {  // destination channels-first
    sp = p % s.s;
    const int nc = p / s.s;
    c = nc % s.c;
    n = nc / s.c;
  } else {  // destination channels-last
    c = p % s.c;
    const int ns = p / s.c;
    sp = ns % s.s;
    n = ns / s.s;
  }
  dst[p] = src[offset_of(n, c, sp, s)];
}

}  // namespace

void convert_layout(DType dtype, ActShape shape, const void* src, void* dst, cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  const unsigned blocks = blocks_for(shape.numel());
  switch (element_bytes(dtype)) {
    case 4:
      CONVBENCH_LAUNCH(blocks, kThreads, 0, stream, convert_layout_kernel<uint32_t>)
      (shape, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst));
      break;
    case 2:
      CONVBENCH_LAUNCH(blocks, kThreads, 0, stream, convert_layout_kernel<uint16_t>)
      (shape, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst));
      break;
    default: throw std::invalid_argument("cuda kernels: layout conversion of " + std::string(to_string(dtype)));
  }
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

namespace convbench::kernels {
namespace {

// (n, c, spatial coordinates) of memory position p in a tensor of spatial extent `e`.
__device__ __forceinline__ void box_decode(const BoxShape& s, int p, const Dims3& e, int& n, int& c, int& z, int& y,
                                           int& x) {
  int sp;
  decode(s, p, volume(e), n, c, sp);
  z = sp / (e[1] * e[2]);
  y = sp / e[2] % e[1];
  x = sp % e[2];
}

template <class E>
__global__ void pad_box_kernel(BoxShape s, const E* small, E* big) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(s.n) * s.c * volume(s.big)) return;
  const int p = static_cast<int>(i);
  int n, c, z, y, x;
  box_decode(s, p, s.big, n, c, z, y, x);
  const bool inside = z < s.small[0] && y < s.small[1] && x < s.small[2];
  big[p] = inside ? small[position(s, n, c, (z * s.small[1] + y) * s.small[2] + x, volume(s.small))] : E(0);
}

template <class E>
__global__ void crop_box_kernel(BoxShape s, const E* big, E* small) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(s.n) * s.c * volume(s.small)) return;
  const int p = static_cast<int>(i);
  int n, c, z, y, x;
  box_decode(s, p, s.small, n, c, z, y, x);
  small[p] = big[position(s, n, c, (z * s.big[1] + y) * s.big[2] + x, volume(s.big))];
}

int64_t box_count(const BoxShape& s, const Dims3& d) { return static_cast<int64_t>(s.n) * s.c * d[0] * d[1] * d[2]; }

}  // namespace

void pad_box(DType dtype, const BoxShape& shape, const void* small, void* big, cudaStream_t stream) {
  const int64_t count = box_count(shape, shape.big);
  if (count <= 0) return;
  switch (element_bytes(dtype)) {
    case 4:
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, pad_box_kernel<uint32_t>)
      (shape, static_cast<const uint32_t*>(small), static_cast<uint32_t*>(big));
      break;
    case 2:
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, pad_box_kernel<uint16_t>)
      (shape, static_cast<const uint16_t*>(small), static_cast<uint16_t*>(big));
      break;
    default: throw std::invalid_argument("cuda kernels: padding a tensor of " + std::string(to_string(dtype)));
  }
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void crop_box(DType dtype, const BoxShape& shape, const void* big, void* small, cudaStream_t stream) {
  const int64_t count = box_count(shape, shape.small);
  if (count <= 0) return;
  switch (element_bytes(dtype)) {
    case 4:
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, crop_box_kernel<uint32_t>)
      (shape, static_cast<const uint32_t*>(big), static_cast<uint32_t*>(small));
      break;
    case 2:
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, crop_box_kernel<uint16_t>)
      (shape, static_cast<const uint16_t*>(big), static_cast<uint16_t*>(small));
      break;
    default: throw std::invalid_argument("cuda kernels: cropping a tensor of " + std::string(to_string(dtype)));
  }
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

// ---- space_to_depth --------------------------------------------------------------------------

namespace convbench::kernels {
namespace {

// The input memory position that output memory position p reads (see SpaceToDepthShape).
__device__ __forceinline__ int space_to_depth_source(const SpaceToDepthShape& s, int p) {
  const int out_spatial = volume(s.out), in_spatial = volume(s.in);
  const int out_channels = s.c * s.bd * s.b * s.b;
  int n, oc, sp;
  if (s.channels_last) {
    oc = p % out_channels;
    sp = p / out_channels % out_spatial;
    n = p / (out_channels * out_spatial);
  } else {
    sp = p % out_spatial;
    oc = p / out_spatial % out_channels;
    n = p / (out_spatial * out_channels);
  }
  const int block = s.bd * s.b * s.b;
  const int c = s.channel_major ? oc / block : oc % s.c;
  const int off = s.channel_major ? oc % block : oc / s.c;
  const int ow = sp % s.out[2], oh = sp / s.out[2] % s.out[1], od = sp / (s.out[2] * s.out[1]);
  const int x = ow * s.b + off % s.b, y = oh * s.b + off / s.b % s.b, z = od * s.bd + off / (s.b * s.b);
  const int isp = (z * s.in[1] + y) * s.in[2] + x;
  return s.channels_last ? (n * in_spatial + isp) * s.c + c : (n * s.c + c) * in_spatial + isp;
}

// One thread per output element, in the output's memory order: forward reads the input (gather),
// backward writes the input's gradient (a permutation: every element once, no atomics).
template <class E>
__global__ void space_to_depth_kernel(SpaceToDepthShape s, int count, const E* src, E* dst, bool backward) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int p = static_cast<int>(i);
  const int q = space_to_depth_source(s, p);
  if (backward)
    dst[q] = src[p];
  else
    dst[p] = src[q];
}

void launch_space_to_depth(DType dtype, const SpaceToDepthShape& s, const void* src, void* dst, bool backward,
                           cudaStream_t stream) {
  const int count = s.n * s.c * s.in[0] * s.in[1] * s.in[2];  // < 2^31: the backend checks
  if (count <= 0) return;
  switch (element_bytes(dtype)) {
    case 4:
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, space_to_depth_kernel<uint32_t>)
      (s, count, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), backward);
      break;
    case 2:
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream, space_to_depth_kernel<uint16_t>)
      (s, count, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), backward);
      break;
    default: throw std::invalid_argument("cuda kernels: space_to_depth of " + std::string(to_string(dtype)));
  }
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

// channel_shuffle: output element p reads the input channel that moves to its channel (forward),
// or, backward, the gradient element p reads the output channel its channel moved to.
template <class E>
__global__ void channel_shuffle_kernel(ActShape s, int groups, const E* src, E* dst, bool backward) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(s.numel())) return;
  const ActPosition pos = ActPosition::at(i, s);
  const int per_group = s.c / groups;
  // forward: output channel j * g + i holds input channel i * (C/g) + j; backward: input channel
  // c = i * (C/g) + j takes the gradient of output channel j * g + i.
  const int other =
      backward ? (pos.c % per_group) * groups + pos.c / per_group : (pos.c % groups) * per_group + pos.c / groups;
  dst[i] = src[offset_of(pos.n, other, pos.sp, s)];
}

}  // namespace

void channel_shuffle(DType dtype, ActShape shape, int groups, const void* src, void* dst, bool backward,
                     cudaStream_t stream) {
  if (groups <= 0 || shape.c % groups != 0)
    throw std::invalid_argument("cuda kernels: channel_shuffle: " + std::to_string(shape.c) +
                                " channels are not divisible into " + std::to_string(groups) + " groups");
  if (shape.numel() <= 0) return;
  switch (element_bytes(dtype)) {
    case 4:
      CONVBENCH_LAUNCH(blocks_for(shape.numel()), kThreads, 0, stream, channel_shuffle_kernel<uint32_t>)
      (shape, groups, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), backward);
      break;
    case 2:
      CONVBENCH_LAUNCH(blocks_for(shape.numel()), kThreads, 0, stream, channel_shuffle_kernel<uint16_t>)
      (shape, groups, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), backward);
      break;
    default: throw std::invalid_argument("cuda kernels: channel_shuffle of " + std::string(to_string(dtype)));
  }
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void space_to_depth_forward(DType dtype, const SpaceToDepthShape& shape, const void* x, void* y, cudaStream_t stream) {
  launch_space_to_depth(dtype, shape, x, y, false, stream);
}

void space_to_depth_backward(DType dtype, const SpaceToDepthShape& shape, const void* g, void* grad_x,
                             cudaStream_t stream) {
  launch_space_to_depth(dtype, shape, g, grad_x, true, stream);
}

}  // namespace convbench::kernels

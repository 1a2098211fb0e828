// Depthwise convolutions in convbench's own kernels, 2-D and 3-D, both layouts, any stride,
// padding, dilation and channel multiplier: forward with the bias fused, the input gradient as
// a gather per input element (no atomics), and the weight gradient as fixed-order chunked sums.
// cuDNN runs these through its grouped path (on the H200 its backward-filter algorithm took a
// 26 MB workspace even in 2-D); PyTorch sends channels-first depthwise convs to kernels of the
// same shape as these (ATen's DepthwiseConv3d.cu: one thread per output, 3x3x3 unrolled).
//
// The per-element arithmetic is kernels/depthwise_conv_math.hpp's, which the host tests run on
// every machine; this file adds the launches and the two merges (over a block, over the chunks).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/common.cuh"
#include "kernels/depthwise_conv_math.hpp"

namespace convbench::kernels {

namespace {

constexpr int64_t kDwTargetBlocks = 1024, kDwMinRowsPerThread = 8;

int64_t dw_volume(const Dims3& d) { return int64_t{d[0]} * d[1] * d[2]; }

// ---- forward and input gradient: one thread per element of the tensor written ---------------

template <int KD, int KH, int KW, class T>
__global__ void dw_forward_kernel(DepthwiseShape s, const T* x, const T* w, const T* bias, T* y, int count) {
  const int64_t p = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p >= count) return;
  const DwPosition o = dw_position(static_cast<int>(p), s.out_channels(), s.out, s.channels_last);
  y[p] = from_float<T>(depthwise_output<KD, KH, KW>(s, x, w, bias, o));
}

template <int KD, int KH, int KW, class T>
__global__ void dw_grad_input_kernel(DepthwiseShape s, const T* w, const T* dy, T* dx, int count) {
  const int64_t p = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p >= count) return;
  const DwPosition i = dw_position(static_cast<int>(p), s.c, s.in, s.channels_last);
  dx[p] = from_float<T>(depthwise_grad_input<KD, KH, KW>(s, w, dy, i));
}

// ---- weight gradient, stage 1: partial[(split * K + k) * taps + tap] ---------------------------

// Channels-first: a block of kThreads per (output channel, tap group, chunk); neighbouring
// threads take neighbouring output positions, so dy and x are read along W. Each warp adds its
// lanes' sums of every tap by shuffles, then one barrier, then warp 0 adds the warps' sums of each
// tap in warp order: the sums block_sum gives, with one barrier in all instead of three per tap.
template <int KD, int KH, int KW, int Taps, class T>
__global__ void dw_grad_weight_partial_cf(DepthwiseShape s, DepthwiseWeightGradPlan plan, const T* x, const T* dy,
                                          float* partial) {
  __shared__ float warp_sums[kThreads / kWarpSize][Taps];
  const int k = blockIdx.x, tap_begin = blockIdx.y * Taps, split = blockIdx.z;
  const int64_t begin = int64_t{split} * plan.rows_per_split;
  const int64_t end = min(int64_t{plan.rows}, begin + plan.rows_per_split);
  float acc[Taps] = {};
  for (int64_t row = begin + threadIdx.x; row < end; row += blockDim.x)
    depthwise_grad_weight_terms<KD, KH, KW, Taps>(s, x, dy, k, static_cast<int>(row), tap_begin, acc);
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize, warps = blockDim.x / kWarpSize;
#pragma unroll
  for (int j = 0; j < Taps; ++j) {
    float value = acc[j];
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (lane == 0) warp_sums[warp][j] = value;
  }
  __syncthreads();
  if (warp != 0) return;
  const int64_t base = (int64_t{split} * s.out_channels() + k) * s.taps() + tap_begin;
  for (int j = 0; j < Taps; ++j) {
    float value = lane < warps ? warp_sums[lane][j] : 0.0f;
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (lane == 0) partial[base + j] = value;
  }
}

// Channels-last: a block of (32 output channels, 8 row lanes) per (channel tile, tap group,
// chunk); a warp reads 32 neighbouring channels of one position. The 8 lanes' sums are added in
// lane order through shared memory, kTapsPerRound taps at a time (a tile of every tap would not
// fit 7x7's 49): two barriers per round, 4 for a 3x3x3 kernel where one tap at a time took 54, and
// each row lane adds the taps of its own, so no lane waits idle while one adds them all.
constexpr int kTapsPerRound = 16;  // 8 rows x 16 taps x 32 channels x 4 B = 16 KiB of shared memory

template <int KD, int KH, int KW, int Taps, class T>
__global__ void dw_grad_weight_partial_cl(DepthwiseShape s, DepthwiseWeightGradPlan plan, const T* x, const T* dy,
                                          float* partial) {
  constexpr int kRoundTaps = Taps < kTapsPerRound ? Taps : kTapsPerRound;
  __shared__ float tile[kTileRows][kRoundTaps][kTileChannels];
  const int k = blockIdx.x * kTileChannels + threadIdx.x, tap_begin = blockIdx.y * Taps, split = blockIdx.z;
  const int channels = s.out_channels();
  const int64_t begin = int64_t{split} * plan.rows_per_split;
  const int64_t end = min(int64_t{plan.rows}, begin + plan.rows_per_split);
  float acc[Taps] = {};
  if (k < channels)
    for (int64_t row = begin + threadIdx.y; row < end; row += kTileRows)
      depthwise_grad_weight_terms<KD, KH, KW, Taps>(s, x, dy, k, static_cast<int>(row), tap_begin, acc);
  const int64_t base = (int64_t{split} * channels + k) * s.taps() + tap_begin;
#pragma unroll
  for (int first = 0; first < Taps; first += kRoundTaps) {
#pragma unroll
    for (int t = 0; t < kRoundTaps; ++t)
      if (first + t < Taps) tile[threadIdx.y][t][threadIdx.x] = acc[first + t];
    __syncthreads();
    if (k < channels)
      for (int t = threadIdx.y; t < kRoundTaps && first + t < Taps; t += kTileRows) {
        float total = 0.0f;
        for (int r = 0; r < kTileRows; ++r) total += tile[r][t][threadIdx.x];
        partial[base + first + t] = total;
      }
    __syncthreads();
  }
}

}  // namespace

DepthwiseWeightGradPlan depthwise_weight_grad_plan(const DepthwiseShape& s) {
  DepthwiseWeightGradPlan p;
  bool unrolled = false;
  with_depthwise_extents(s, [&](auto kd, auto, auto) { unrolled = decltype(kd)::value > 0; });
  p.taps_per_group = unrolled ? s.taps() : 1;
  p.tap_groups = s.taps() / p.taps_per_group;
  // In 64 bits: the product can pass 2^31 - 1 before the check.
  const int64_t rows = int64_t{s.n} * dw_volume(s.out);
  if (rows > std::numeric_limits<int>::max() || rows < 1)
    throw std::invalid_argument("depthwise_weight_grad_plan: " + std::to_string(rows) +
                                " rows (N x output volume) are not in 1 .. 2^31-1");
  p.rows = static_cast<int>(rows);
  const int64_t channel_blocks =
      s.channels_last ? (s.out_channels() + kTileChannels - 1) / kTileChannels : s.out_channels();
  const int64_t row_threads = s.channels_last ? kTileRows : kThreads;
  const int64_t fill = (kDwTargetBlocks + channel_blocks * p.tap_groups - 1) / (channel_blocks * p.tap_groups);
  const int64_t most = rows / (row_threads * kDwMinRowsPerThread);  // rounded down: every chunk is that long
  const int64_t splits = std::max<int64_t>(1, std::min<int64_t>({fill, most, kMaxChunks}));
  const int64_t per_split = (rows + splits - 1) / splits;
  p.rows_per_split = static_cast<int>(per_split);
  p.splits = static_cast<int>((rows + per_split - 1) / per_split);
  return p;
}

int64_t depthwise_workspace_bytes(const DepthwiseShape& s, bool weight_grad) {
  if (!weight_grad) return 0;
  const DepthwiseWeightGradPlan plan = depthwise_weight_grad_plan(s);
  return region_bytes<float>(int64_t{plan.splits} * s.out_channels() * s.taps());
}

void depthwise_conv_forward(DType dtype, const DepthwiseShape& s, const void* x, const void* w, const void* bias,
                            void* y, cudaStream_t stream) {
  const int64_t count = int64_t{s.n} * s.out_channels() * dw_volume(s.out);
  if (count <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    with_depthwise_extents(s, [&](auto kd, auto kh, auto kw) {
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream,
                       dw_forward_kernel<decltype(kd)::value, decltype(kh)::value, decltype(kw)::value, T>)
      (s, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias), static_cast<T*>(y),
       static_cast<int>(count));
    });
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void depthwise_conv_grad_input(DType dtype, const DepthwiseShape& s, const void* w, const void* dy, void* dx,
                               cudaStream_t stream) {
  const int64_t count = int64_t{s.n} * s.c * dw_volume(s.in);
  if (count <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    with_depthwise_extents(s, [&](auto kd, auto kh, auto kw) {
      CONVBENCH_LAUNCH(blocks_for(count), kThreads, 0, stream,
                       dw_grad_input_kernel<decltype(kd)::value, decltype(kh)::value, decltype(kw)::value, T>)
      (s, static_cast<const T*>(w), static_cast<const T*>(dy), static_cast<T*>(dx), static_cast<int>(count));
    });
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void depthwise_conv_grad_weight(DType dtype, const DepthwiseShape& s, const void* x, const void* dy, void* dw,
                                void* workspace, cudaStream_t stream) {
  if (workspace == nullptr) throw std::invalid_argument("depthwise_conv_grad_weight: no workspace");
  const DepthwiseWeightGradPlan plan = depthwise_weight_grad_plan(s);
  auto* partial = static_cast<float*>(workspace);
  const int entries = s.out_channels() * s.taps();
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* xt = static_cast<const T*>(x);
    const T* dyt = static_cast<const T*>(dy);
    with_depthwise_extents(s, [&](auto kd, auto kh, auto kw) {
      constexpr int KD = decltype(kd)::value, KH = decltype(kh)::value, KW = decltype(kw)::value;
      // Unrolled sizes keep every tap's sum in registers; any other kernel takes one tap per group.
      constexpr int Taps = KD > 0 ? KD * KH * KW : 1;
      if (s.channels_last) {
        const dim3 grid((s.out_channels() + kTileChannels - 1) / kTileChannels, plan.tap_groups, plan.splits);
        CONVBENCH_LAUNCH(grid, dim3(kTileChannels, kTileRows), 0, stream,
                         dw_grad_weight_partial_cl<KD, KH, KW, Taps, T>)
        (s, plan, xt, dyt, partial);
      } else {
        const dim3 grid(s.out_channels(), plan.tap_groups, plan.splits);
        CONVBENCH_LAUNCH(grid, kThreads, 0, stream, dw_grad_weight_partial_cf<KD, KH, KW, Taps, T>)
        (s, plan, xt, dyt, partial);
      }
    });
    CONVBENCH_CUDA_CHECK_LAUNCH();
    // Stage 2: a warp per (channel, tap) adds its chunks (common.cuh). Stage 1 wrote floats;
    // Sums<1> is one float, the view the merge reads.
    CONVBENCH_LAUNCH(warp_merge_blocks(entries), kThreads, 0, stream, sum_chunks_kernel<T>)
    (entries, plan.splits, reinterpret_cast<const Sums<1>*>(partial), static_cast<T*>(dw));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

// Per-channel work shared by batch norm, the conv bias and layer_scale: how reductions over
// (N, spatial) are split into chunks, the bias gradient (a per-channel sum), the bias addition,
// and layer_scale's per-channel product and its weight gradient (a per-channel dot product).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/common.cuh"

namespace convbench::kernels {

ChannelReducePlan channel_reduce_plan(ActShape s) {
  // In 64 bits: with one channel, rows can be as large as 2^31 - 1 (the backend's element limit),
  // and rows + kMaxChunks - 1 would overflow an int.
  const int64_t rows = int64_t{s.n} * s.s;
  if (rows > std::numeric_limits<int>::max())
    throw std::invalid_argument("channel_reduce_plan: " + std::to_string(rows) + " rows exceed 2^31-1");
  // Enough chunks to fill the device, but chunks long enough that the merge is cheap next to the
  // reading: channels-first blocks hold one channel (256 threads share the chunk), channels-last
  // blocks hold 32 channels (8 threads share it). At most kMaxChunks chunks per channel, which a
  // warp per channel merges in 8 steps and a tree of 5 (common.cuh).
  const int64_t min_rows = s.channels_last ? 256 : 4096;
  int64_t per_split = std::max(min_rows, (rows + kMaxChunks - 1) / kMaxChunks);
  per_split = std::max<int64_t>(1, std::min(per_split, rows));
  ChannelReducePlan p;
  p.rows = static_cast<int>(rows);
  p.rows_per_split = static_cast<int>(per_split);
  p.splits = static_cast<int>(std::max<int64_t>(1, (rows + per_split - 1) / per_split));
  return p;
}

namespace {

template <class T>
struct LoadSum {
  const T* g;
  __device__ void operator()(Sums<1>& acc, int offset, int, int, int) const { acc.v[0] += to_float(g[offset]); }
};

template <class T>
struct LoadDot {
  const T* g;
  const T* x;
  __device__ void operator()(Sums<1>& acc, int offset, int, int, int) const {
    acc.v[0] += to_float(g[offset]) * to_float(x[offset]);
  }
};

// out = x * w[c]; w in the parameters' dtype P (float32 under mixed precision).
template <class T, class P>
__global__ void scale_channels_kernel(ActShape s, const T* x, const P* w, T* out, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float v[N];
  load_frag(x, p0, count, vec, v);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s))
    if (p0 + k < count) v[k] *= to_float(w[pos.c]);
  store_frag(out, p0, count, vec, v);
}

template <class T>
__global__ void add_channel_bias_kernel(ActShape s, T* y, const T* bias, bool vec) {
  constexpr int N = Vec<T>::N;
  const int64_t count = s.numel();
  const int64_t p0 = frag_start<T>();
  if (p0 >= count) return;
  float v[N];
  load_frag(y, p0, count, vec, v);
  ActPosition pos = ActPosition::at(p0, s);
#pragma unroll
  for (int k = 0; k < N; ++k, pos.next(s))
    if (p0 + k < count) v[k] += to_float(bias[pos.c]);
  store_frag(y, p0, count, vec, v);
}

}  // namespace

int64_t channel_sum_workspace_bytes(ActShape shape) {
  const ChannelReducePlan plan = channel_reduce_plan(shape);
  return region_bytes<Sums<1>>(static_cast<int64_t>(plan.splits) * shape.c);
}

namespace {

// out[c] = the sum over N and space of what load_for(T{}) adds per element, in the dtype's T:
// channel_sum's and channel_dot's two stages. A sum over no elements is zeros (all-zero bits in
// every float type), with no empty grid.
template <class MakeLoad>
void reduce_channels(DType dtype, ActShape shape, void* out, void* workspace, cudaStream_t stream, MakeLoad load_for) {
  if (shape.c <= 0) return;
  if (shape.numel() <= 0) {
    CONVBENCH_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(shape.c * element_bytes(dtype)), stream));
    return;
  }
  const ChannelReducePlan plan = channel_reduce_plan(shape);
  auto* partial = static_cast<Sums<1>*>(workspace);
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch_channel_partials(shape, plan, load_for(tag), partial, stream);
    CONVBENCH_LAUNCH(warp_merge_blocks(shape.c), kThreads, 0, stream, sum_chunks_kernel<T>)
    (shape.c, plan.splits, partial, static_cast<T*>(out));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace

void channel_sum(DType dtype, ActShape shape, const void* g, void* out, void* workspace, cudaStream_t stream) {
  reduce_channels(dtype, shape, out, workspace, stream, [g](auto tag) {
    using T = decltype(tag);
    return LoadSum<T>{static_cast<const T*>(g)};
  });
}

void channel_dot(DType dtype, ActShape shape, const void* g, const void* x, void* out, void* workspace,
                 cudaStream_t stream) {
  reduce_channels(dtype, shape, out, workspace, stream, [g, x](auto tag) {
    using T = decltype(tag);
    return LoadDot<T>{static_cast<const T*>(g), static_cast<const T*>(x)};
  });
}

void scale_channels(DType dtype, DType param_dtype, ActShape shape, const void* x, const void* w, void* out,
                    cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  dispatch_norm_params(dtype, param_dtype, [&](auto tag, auto ptag) {
    using T = decltype(tag);
    using P = decltype(ptag);
    CONVBENCH_LAUNCH(frag_blocks<T>(shape.numel()), kThreads, 0, stream, scale_channels_kernel<T, P>)
    (shape, static_cast<const T*>(x), static_cast<const P*>(w), static_cast<T*>(out), all_aligned16(x, out));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

void add_channel_bias(DType dtype, ActShape shape, void* y, const void* bias, cudaStream_t stream) {
  if (shape.numel() <= 0) return;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    CONVBENCH_LAUNCH(frag_blocks<T>(shape.numel()), kThreads, 0, stream, add_channel_bias_kernel<T>)
    (shape, static_cast<T*>(y), static_cast<const T*>(bias), all_aligned16(y));
  });
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace convbench::kernels

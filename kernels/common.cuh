// Shared by kernels/*.cu: storage types and their float conversions, dtype dispatch, launch
// sizes, 16-byte vector access, and block-level reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_check.hpp"
#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"

namespace convbench::kernels {

// ---- storage types ---------------------------------------------------------------------------

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Calls f(T{}) with T the storage type of `dtype`: float (float32, tf32), __half, __nv_bfloat16.
template <class F>
void dispatch_float(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: f(float{}); return;
    case DType::float16: f(__half{}); return;
    case DType::bfloat16: f(__nv_bfloat16{}); return;
    default: break;
  }
  throw std::invalid_argument("cuda kernels: unsupported dtype " + std::string(to_string(dtype)));
}

// A norm's activations' type T and its parameters' type P: T itself, or float where autocast keeps
// a norm's weights float32 under float16 or bfloat16 activations. f(T{}, P{}).
template <class F>
void dispatch_norm_params(DType dtype, DType param_dtype, F&& f) {
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (param_dtype == DType::float32 || param_dtype == DType::tf32)
      f(tag, float{});
    else if (param_dtype == dtype)
      f(tag, T{});
    else
      throw std::invalid_argument("cuda kernels: norm parameters of dtype " + std::string(to_string(param_dtype)) +
                                  " with activations of dtype " + std::string(to_string(dtype)));
  });
}

// ---- launch sizes ----------------------------------------------------------------------------

constexpr int kThreads = 256;

inline unsigned blocks_for(int64_t work_items, int threads = kThreads) {
  const int64_t b = (work_items + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

// ---- 16-byte vectors -------------------------------------------------------------------------

// N elements of T loaded and stored as one 16-byte access (4 floats, 8 halves).
template <class T>
struct Vec {
  static constexpr int N = 16 / static_cast<int>(sizeof(T));
  struct alignas(16) Pack {
    T v[N];
  };
};

// Whether every pointer allows 16-byte vector access (allocator blocks do; offsets may not).
inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }
template <class... P>
bool all_aligned16(const P*... p) {
  return (aligned16(p) && ...);
}

// ---- index helpers ---------------------------------------------------------------------------

// Memory position of logical (n, c, spatial) in an activation.
__device__ __forceinline__ int offset_of(int n, int c, int sp, const ActShape& s) {
  return s.channels_last ? (n * s.s + sp) * s.c + c : (n * s.c + c) * s.s + sp;
}

// ---- block reductions ------------------------------------------------------------------------

// Sums `value` over the block (blockDim.x threads, a multiple of 32, at most 1024) in a fixed
// order; every thread gets the total. `scratch` holds 32 floats of shared memory.
__device__ __forceinline__ float block_sum(float value, float* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < warps ? scratch[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (lane == 0) scratch[0] = value;
  }
  __syncthreads();
  return scratch[0];
}

// Running mean and sum of squared deviations (Welford), merged with Chan et al.'s formula, so
// that a variance is never the small difference of two large sums.
template <class F>
struct Welford {
  F count = 0, mean = 0, m2 = 0;
  __device__ __forceinline__ void add(F x) {
    count += 1;
    const F d = x - mean;
    mean += d / count;
    m2 += d * (x - mean);
  }
  __device__ __forceinline__ void merge(const Welford& o) {
    if (o.count == 0) return;
    if (count == 0) {
      *this = o;
      return;
    }
    const F n = count + o.count;
    const F d = o.mean - mean;
    mean += d * (o.count / n);
    m2 += o.m2 + d * d * (count * o.count / n);
    count = n;
  }
};

// Merges one Welford per thread of the block into thread 0's (fixed order). `scratch` holds
// blockDim.x entries of shared memory.
template <class F>
__device__ __forceinline__ Welford<F> block_welford(Welford<F> w, Welford<F>* scratch) {
  scratch[threadIdx.x] = w;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) scratch[threadIdx.x].merge(scratch[threadIdx.x + stride]);
    __syncthreads();
  }
  Welford<F> out = scratch[0];
  __syncthreads();
  return out;
}

}  // namespace convbench::kernels

namespace convbench::kernels {

// ---- per-thread fragments of N consecutive elements ------------------------------------------

// Elementwise kernels give each thread N = Vec<T>::N consecutive elements from position p0: one
// 16-byte access when `vec` (all operands 16-byte aligned) and the fragment is whole, element by
// element otherwise (the tail, or unaligned operands).
template <class T>
__device__ __forceinline__ void load_frag(const T* base, int64_t p0, int64_t count, bool vec, float* out) {
  constexpr int N = Vec<T>::N;
  if (vec && p0 + N <= count) {
    const typename Vec<T>::Pack pack = *reinterpret_cast<const typename Vec<T>::Pack*>(base + p0);
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = to_float(pack.v[k]);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = p0 + k < count ? to_float(base[p0 + k]) : 0.0f;
  }
}

template <class T>
__device__ __forceinline__ void store_frag(T* base, int64_t p0, int64_t count, bool vec, const float* in) {
  constexpr int N = Vec<T>::N;
  if (vec && p0 + N <= count) {
    typename Vec<T>::Pack pack;
#pragma unroll
    for (int k = 0; k < N; ++k) pack.v[k] = from_float<T>(in[k]);
    *reinterpret_cast<typename Vec<T>::Pack*>(base + p0) = pack;
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (p0 + k < count) base[p0 + k] = from_float<T>(in[k]);
  }
}

// First element of this thread's fragment.
template <class T>
__device__ __forceinline__ int64_t frag_start() {
  return (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * Vec<T>::N;
}

// Blocks that give every fragment of `count` elements a thread.
template <class T>
unsigned frag_blocks(int64_t count) {
  return blocks_for((count + Vec<T>::N - 1) / Vec<T>::N);
}

// ---- per-channel reductions, stage 1 ---------------------------------------------------------

// Raw shared memory for `count` values of a type with constructors (which __shared__ forbids).
template <class Acc, int count>
struct SharedArray {
  alignas(Acc) unsigned char raw[sizeof(Acc) * count];
  __device__ Acc* get() { return reinterpret_cast<Acc*>(raw); }
};

// Channels-first: block (kThreads) per (channel, chunk of rows); rows are (n, spatial) pairs, so
// neighbouring threads read neighbouring spatial positions. `load(acc, offset, c, n, sp)` adds
// the element at memory position `offset` to the thread's accumulator.
template <class Acc, class Load>
__global__ void channel_partials_cf(ActShape s, int rows_per_split, Load load, Acc* partial) {
  __shared__ SharedArray<Acc, kThreads> shared;
  const int c = blockIdx.x, split = blockIdx.y;
  // Chunk bounds and the loop counter in 64 bits: with one channel, rows reach 2^31 - 1 and
  // `begin + rows_per_split` or `m + blockDim.x` would overflow an int; the row itself fits.
  const int64_t begin = int64_t{split} * rows_per_split;
  const int64_t end = min(int64_t{s.n} * s.s, begin + rows_per_split);
  Acc acc;
  for (int64_t row = begin + threadIdx.x; row < end; row += blockDim.x) {
    const int m = static_cast<int>(row);
    const int n = m / s.s, sp = m - n * s.s;
    load(acc, (n * s.c + c) * s.s + sp, c, n, sp);
  }
  Acc* scratch = shared.get();
  scratch[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) scratch[threadIdx.x].merge(scratch[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[split * s.c + c] = scratch[0];
}

// Channels-last: block (32 channels, 8 row lanes) per (channel tile, chunk of rows); a warp reads
// 32 neighbouring channels of one row.
constexpr int kTileChannels = 32, kTileRows = 8;

template <class Acc, class Load>
__global__ void channel_partials_cl(ActShape s, int rows_per_split, Load load, Acc* partial) {
  __shared__ SharedArray<Acc, kTileChannels * kTileRows> shared;
  const int c = blockIdx.x * kTileChannels + threadIdx.x, split = blockIdx.y;
  const int64_t begin = int64_t{split} * rows_per_split;  // 64 bits: see channel_partials_cf
  const int64_t end = min(int64_t{s.n} * s.s, begin + rows_per_split);
  Acc acc;
  if (c < s.c) {
    for (int64_t row = begin + threadIdx.y; row < end; row += kTileRows) {
      const int m = static_cast<int>(row);
      const int n = m / s.s, sp = m - n * s.s;
      load(acc, m * s.c + c, c, n, sp);
    }
  }
  Acc* scratch = shared.get();
  scratch[threadIdx.y * kTileChannels + threadIdx.x] = acc;
  __syncthreads();
  for (int stride = kTileRows / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.y) < stride)
      scratch[threadIdx.y * kTileChannels + threadIdx.x].merge(
          scratch[(threadIdx.y + stride) * kTileChannels + threadIdx.x]);
    __syncthreads();
  }
  if (threadIdx.y == 0 && c < s.c) partial[split * s.c + c] = scratch[threadIdx.x];
}

// Stage 1 of a per-channel reduction: partial[split * C + c] for every chunk of rows.
template <class Acc, class Load>
void launch_channel_partials(ActShape s, const ChannelReducePlan& plan, Load load, Acc* partial, cudaStream_t stream) {
  if (s.channels_last) {
    const dim3 grid((s.c + kTileChannels - 1) / kTileChannels, plan.splits);
    CONVBENCH_LAUNCH(grid, dim3(kTileChannels, kTileRows), 0, stream, channel_partials_cl<Acc, Load>)
    (s, plan.rows_per_split, load, partial);
  } else {
    const dim3 grid(s.c, plan.splits);
    CONVBENCH_LAUNCH(grid, kThreads, 0, stream, channel_partials_cf<Acc, Load>)(s, plan.rows_per_split, load, partial);
  }
  CONVBENCH_CUDA_CHECK_LAUNCH();
}

// K float sums per channel (stage 1) ...
template <int K>
struct Sums {
  float v[K] = {};
  __device__ __forceinline__ void merge(const Sums& o) {
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] += o.v[k];
  }
};

// ---- per-channel reductions, stage 2: one warp per channel -----------------------------------

// Stage 2 gives each channel a warp (blocks of kThreads: 8 channels per block): lane l merges
// chunks l, l + 32, ... in double, then the lanes are merged as a tree over the warp. Both orders
// are fixed, so the result is the same bits every run; one thread per channel walking up to 256
// chunks one after another was the stage's cost. Lane 0 holds the result.
constexpr int kWarpSize = 32;

// The channel this thread's warp merges (every lane of a warp gets the same one).
__device__ __forceinline__ int warp_channel() {
  return static_cast<int>((int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kWarpSize);
}
__device__ __forceinline__ bool warp_leader() { return threadIdx.x % kWarpSize == 0; }
// Blocks that give each of `channels` channels a warp.
inline unsigned warp_merge_blocks(int channels) { return blocks_for(int64_t{channels} * kWarpSize); }

// K sums of channel c's chunks (partial[i * channels + c]), in double.
template <int K>
__device__ __forceinline__ void merge_sums(const Sums<K>* partial, int splits, int channels, int c, double* out) {
  for (int k = 0; k < K; ++k) out[k] = 0.0;
  for (int i = threadIdx.x % kWarpSize; i < splits; i += kWarpSize)
    for (int k = 0; k < K; ++k) out[k] += partial[i * channels + c].v[k];
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    for (int k = 0; k < K; ++k) out[k] += __shfl_down_sync(0xffffffffu, out[k], offset);
}

// out[c] = the sum of channel c's chunks (partial[i * channels + c]), rounded to T: the conv bias
// gradient's and the depthwise weight gradient's stage 2. Launch with warp_merge_blocks(channels)
// blocks of kThreads.
template <class T>
__global__ void sum_chunks_kernel(int channels, int splits, const Sums<1>* partial, T* out) {
  const int c = warp_channel();
  if (c >= channels) return;  // whole warps
  double total[1];
  merge_sums<1>(partial, splits, channels, c, total);
  if (warp_leader()) out[c] = from_float<T>(static_cast<float>(total[0]));
}

// A norm's weight and bias gradients (group and layer norm), from K = 2 sums per channel: [0] the
// sum of g * xhat, [1] the sum of g. Launch with warp_merge_blocks(channels) blocks of kThreads.
template <class T>
__global__ void affine_grad_finish(int channels, int splits, const Sums<2>* partial, T* grad_gamma, T* grad_beta) {
  const int c = warp_channel();
  if (c >= channels) return;  // whole warps
  double total[2];
  merge_sums<2>(partial, splits, channels, c, total);
  if (!warp_leader()) return;
  if (grad_gamma) grad_gamma[c] = from_float<T>(static_cast<float>(total[0]));
  if (grad_beta) grad_beta[c] = from_float<T>(static_cast<float>(total[1]));
}

// Channel c's Welford accumulators merged (Chan et al.), in double.
__device__ __forceinline__ Welford<double> merge_welford(const Welford<float>* partial, int splits, int channels,
                                                         int c) {
  Welford<double> w;
  for (int i = threadIdx.x % kWarpSize; i < splits; i += kWarpSize) {
    const Welford<float>& p = partial[i * channels + c];
    Welford<double> part;
    part.count = p.count;
    part.mean = p.mean;
    part.m2 = p.m2;
    w.merge(part);
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    Welford<double> other;
    other.count = __shfl_down_sync(0xffffffffu, w.count, offset);
    other.mean = __shfl_down_sync(0xffffffffu, w.mean, offset);
    other.m2 = __shfl_down_sync(0xffffffffu, w.m2, offset);
    w.merge(other);
  }
  return w;
}

// Bytes of `count` values of T, rounded up to 256 so that the next region stays aligned.
template <class T>
constexpr int64_t region_bytes(int64_t count) {
  return (count * static_cast<int64_t>(sizeof(T)) + 255) / 256 * 256;
}

// ---- positions in (n, c, spatial) tensors of either layout ------------------------------------
// `Shape` is any kernel shape with `channels_last` and `c` (channels) members.

__device__ __forceinline__ int volume(const Dims3& d) { return d[0] * d[1] * d[2]; }

// Memory position of (n, c, flat spatial position sp) in a tensor of `spatial` positions.
template <class Shape>
__device__ __forceinline__ int position(const Shape& s, int n, int c, int sp, int spatial) {
  return s.channels_last ? (n * spatial + sp) * s.c + c : (n * s.c + c) * spatial + sp;
}

// Decodes memory position p of a tensor of `spatial` positions into (n, c, sp).
template <class Shape>
__device__ __forceinline__ void decode(const Shape& s, int p, int spatial, int& n, int& c, int& sp) {
  if (s.channels_last) {
    c = p % s.c;
    const int ns = p / s.c;
    sp = ns % spatial;
    n = ns / spatial;
  } else {
    sp = p % spatial;
    const int nc = p / spatial;
    c = nc % s.c;
    n = nc / s.c;
  }
}

}  // namespace convbench::kernels

// The CPU emulator of convbench's CUDA kernels: kernels/*.cu compiled by the host compiler and
// run on the CPU, so that every kernel is checked in every CI run, long before a GPU is lent
// (as Triton's interpreter and Numba's CUDA simulator do for theirs). A build includes this
// header first, then one kernels/*.cu file (CMakeLists.txt generates the pairs).
//
// Each block's threads run as fibers on the calling thread: a thread runs until it reaches
// __syncthreads or a warp shuffle, then the next; the order of the threads (and of the blocks)
// is shuffled with the device's seed, so that a read of shared memory that a missing barrier
// leaves unordered gives another answer from one seed to the next. Errors that a GPU would hang
// on or leave undefined are reported, with the kernel and the barrier's file:line:
//  - a thread that exits, or waits at another __syncthreads, while others wait at one;
//  - a full-mask shuffle that a lane of the warp never reaches (it exited or waits elsewhere),
//    or in a warp with fewer than 32 threads;
//  - a launch beyond the GPUs' limits (kernels/launch.cuh, shared with the nvcc build).
// Shared memory is a `static` of the kernel (blocks run one at a time), atomics are plain
// read-modify-writes (one thread runs at a time), and cudaMemsetAsync writes at once.
//
// What it does not check: anything in cuDNN, cuBLAS or NVML; speed, coalescing or occupancy;
// the device's float behaviour (FMA contraction, __expf's error): compare with tolerances.
#pragma once

#ifdef __CUDACC__
#error "kernels/sim/cuda_sim.hpp is for host builds of kernels/*.cu, not for nvcc"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

// The CUDA headers' host definitions make these attributes GCC ignores (with a warning), and
// __shared__ a thread's own local: here a kernel is an ordinary function and its shared memory
// one variable for the block that runs.
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __shared__ static

#include <map>
#include <memory>
#include <string>

namespace convbench::kernels::sim {

// The emulated GPU of the thread that makes it, while it lives, as a CUDA context is current to
// a thread: the schedule's seed, the fibers' stacks, and what the kernels did. Launches without
// one throw. Not copyable; one per thread at a time.
class Device {
 public:
  struct Options {
    uint64_t seed = 1;                // of the threads' and blocks' order
    bool shuffle = true;              // false: threads and blocks in index order
    size_t stack_bytes = 256 * 1024;  // per emulated thread (AddressSanitizer's frames are large)
  };
  struct Counts {
    int64_t launches = 0, blocks = 0, threads = 0, barriers = 0, shuffles = 0;
  };
  Device();
  explicit Device(Options options);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Counts& counts() const;
  // Launches per kernel, by the name its launch site gives (e.g. "sum_chunks_kernel<T>").
  const std::map<std::string, int64_t>& launches_by_kernel() const;

  struct State;  // cuda_sim.cpp

 private:
  std::unique_ptr<State> state_;
};

// One kernel launch: its shape and name, for the emulator and its messages.
struct LaunchShape {
  dim3 grid, block;
  size_t shared_bytes = 0;
  const char* kernel = "";
};

// Runs `thread` once per thread of the launch, as the GPU would (see above). Throws
// std::logic_error for the errors above; without a current sim::Device, std::logic_error too.
void run(const LaunchShape& shape, const std::function<void()>& thread);

// The running thread's indices and its launch's sizes (threadIdx, blockIdx, blockDim, gridDim).
const uint3& thread_index();
const uint3& block_index();
const dim3& block_size();
const dim3& grid_size();

// __syncthreads() at file:line.
void sync_threads(const char* file, int line);
// One lane's part of a full-mask shuffle down: `bytes` of `value` in, lane + delta's value out
// (its own where lane + delta is beyond the warp).
void shuffle_down(unsigned mask, const void* value, void* out, size_t bytes, unsigned delta, int width);

// The CUDA runtime calls the kernels make.
cudaError_t memset_async(void* data, int value, size_t bytes, cudaStream_t stream);
cudaError_t get_last_error();

// CONVBENCH_LAUNCH's host half: a function object that takes the kernel's arguments and runs it.
template <class... Params>
auto launcher(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t /*stream*/, const char* name,
              void (*kernel)(Params...)) {
  return [=](auto&&... args) {
    // Each thread gets its own copies of the arguments, as kernel parameters are on a GPU.
    run(LaunchShape{.grid = grid, .block = block, .shared_bytes = shared_bytes, .kernel = name},
        [&] { kernel(args...); });
  };
}

}  // namespace convbench::kernels::sim

#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#define threadIdx (::convbench::kernels::sim::thread_index())
#define blockIdx (::convbench::kernels::sim::block_index())
#define blockDim (::convbench::kernels::sim::block_size())
#define gridDim (::convbench::kernels::sim::grid_size())
#define __syncthreads() ::convbench::kernels::sim::sync_threads(__FILE__, __LINE__)
#define cudaMemsetAsync ::convbench::kernels::sim::memset_async
#define cudaGetLastError ::convbench::kernels::sim::get_last_error

template <class T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  T out;
  ::convbench::kernels::sim::shuffle_down(mask, &value, &out, sizeof(T), delta, width);
  return out;
}

// One thread runs at a time: a plain read-modify-write is atomic here.
template <class T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}

inline float __expf(float x) { return std::exp(x); }
// CUDA's math library puts these at global scope, where the kernels call them.
using std::isfinite;
using std::isinf;
using std::isnan;

// CUDA's device min and max, which kernels call unqualified on mixed int widths' common type.
template <class A, class B>
auto min(A a, B b) -> std::common_type_t<A, B> {
  return a < b ? a : b;
}
template <class A, class B>
auto max(A a, B b) -> std::common_type_t<A, B> {
  return a < b ? b : a;
}

// Every kernel launch of kernels/*.cu goes through CONVBENCH_LAUNCH, so that one place checks
// the launch against the limits of the GPUs convbench builds for, and so that the same sources
// run on the CPU emulator (kernels/sim/) where no GPU is present:
//
//   CONVBENCH_LAUNCH(grid, block, shared_bytes, stream, kernel<T>)(arguments...);
//
// is `kernel<T><<<grid, block, shared_bytes, stream>>>(arguments...)` under nvcc, and the
// emulator's launch of the same kernel in a host build (kernels/sim/cuda_sim.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace convbench::kernels {

// The launch limits of compute capability 7.0 and later (CUDA C++ Programming Guide, "Features
// and Technical Specifications"), which every architecture convbench builds for has: a launch
// beyond them fails with cudaErrorInvalidConfiguration, named here with the kernel and its call
// site instead.
struct LaunchLimits {
  static constexpr unsigned threads_per_block = 1024;
  static constexpr unsigned block_x = 1024, block_y = 1024, block_z = 64;
  static constexpr unsigned grid_x = 2147483647u, grid_y = 65535, grid_z = 65535;
  static constexpr size_t dynamic_shared_bytes = 48 * 1024;  // without opting in per kernel
};

// Why a launch of this shape cannot run, or an empty string.
inline std::string launch_refusal(dim3 grid, dim3 block, size_t shared_bytes) {
  const auto shape = [](dim3 d) {
    return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
  };
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return "an empty grid " + shape(grid);
  if (block.x == 0 || block.y == 0 || block.z == 0) return "an empty block " + shape(block);
  if (grid.x > LaunchLimits::grid_x || grid.y > LaunchLimits::grid_y || grid.z > LaunchLimits::grid_z)
    return "a grid of " + shape(grid) + " blocks, beyond (2^31 - 1, 65535, 65535)";
  if (block.x > LaunchLimits::block_x || block.y > LaunchLimits::block_y || block.z > LaunchLimits::block_z)
    return "a block of " + shape(block) + " threads, beyond (1024, 1024, 64)";
  if (uint64_t{block.x} * block.y * block.z > LaunchLimits::threads_per_block)
    return "a block of " + std::to_string(uint64_t{block.x} * block.y * block.z) + " threads, beyond 1024";
  if (shared_bytes > LaunchLimits::dynamic_shared_bytes)
    return std::to_string(shared_bytes) + " bytes of dynamic shared memory, beyond 48 KiB";
  return {};
}

// Throws std::logic_error naming the kernel and its launch site when the launch cannot run: a
// kernel's launch sizing is convbench's own code, so this is a bug to report, not an input.
inline void check_launch(dim3 grid, dim3 block, size_t shared_bytes, const char* kernel, const char* file, int line) {
  const std::string why = launch_refusal(grid, block, shared_bytes);
  if (!why.empty())
    throw std::logic_error(std::string(file) + ":" + std::to_string(line) + ": launch of " + kernel + " with " + why);
}

}  // namespace convbench::kernels

#ifdef __CUDACC__
#define CONVBENCH_LAUNCH(grid, block, shared_bytes, stream, ...)                                                 \
  ::convbench::kernels::check_launch(dim3(grid), dim3(block), (shared_bytes), #__VA_ARGS__, __FILE__, __LINE__), \
      __VA_ARGS__<<<grid, block, shared_bytes, stream>>>
#else
// A host build of the kernels: only the CPU emulator compiles them so (kernels/sim/cuda_sim.hpp).
#define CONVBENCH_LAUNCH(grid, block, shared_bytes, stream, ...)                                                 \
  ::convbench::kernels::check_launch(dim3(grid), dim3(block), (shared_bytes), #__VA_ARGS__, __FILE__, __LINE__), \
      ::convbench::kernels::sim::launcher(dim3(grid), dim3(block), (shared_bytes), (stream), #__VA_ARGS__,       \
                                          __VA_ARGS__)
#endif

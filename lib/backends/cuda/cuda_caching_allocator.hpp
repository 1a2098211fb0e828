// Device memory for the CUDA backend: cudaMalloc'd blocks cached by exact rounded size, like
// CachingHostAllocator (and PyTorch's CUDA caching allocator for one stream), so that timed loops
// make no cudaMalloc/cudaFree calls after warm-up. Every tensor and every workspace the CUDA
// backend touches comes from here, so the statistics mean what they mean on the host backends.
//
// Blocks are reused without synchronisation: the backend queues all work on one stream, so a
// kernel that reads a freed block is ordered before any later kernel that writes its next owner.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <map>
#include <utility>

#include "runtime/caching_allocator.hpp"

namespace convbench::cuda {

// The three device-memory calls the allocator makes: cudaMalloc, cudaFree and cudaMemGetInfo by
// default; host tests pass their own to show what happens when one of them fails.
struct DeviceMemoryCalls {
  std::function<cudaError_t(void** ptr, size_t bytes)> malloc = [](void** ptr, size_t bytes) {
    return cudaMalloc(ptr, bytes);
  };
  std::function<cudaError_t(void* ptr)> free = [](void* ptr) { return cudaFree(ptr); };
  std::function<cudaError_t(size_t* free_bytes, size_t* total_bytes)> mem_get_info = [](size_t* f, size_t* t) {
    return cudaMemGetInfo(f, t);
  };
};

class CudaCachingAllocator final : public CachingAllocator {
 public:
  // `limit_bytes` caps reserved memory (0: only the device's memory limits it); beyond it
  // allocations throw OutOfMemory, as when the device itself runs out.
  explicit CudaCachingAllocator(int64_t limit_bytes = 0, DeviceMemoryCalls calls = {})
      : CachingAllocator(limit_bytes), calls_(std::move(calls)) {}
  ~CudaCachingAllocator() override;
  bool on_device() const override { return true; }

 protected:
  // cudaMalloc, or nullptr when the device is out of memory (other errors throw).
  void* system_allocate(int64_t size) override;
  // cudaFree (which waits for the device, so no queued kernel still uses the block); a failure is
  // remembered and thrown by report_release_failures() once the other blocks are freed.
  bool system_free(void* block) override;
  void report_release_failures() override;
  std::string out_of_memory_detail(int64_t size) const override;

 private:
  DeviceMemoryCalls calls_;
  cudaError_t first_release_failure_ = cudaSuccess;
};

}  // namespace convbench::cuda

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

#include "runtime/allocator.hpp"

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

class CudaCachingAllocator final : public Allocator {
 public:
  // `limit_bytes` caps reserved memory (0: only the device's memory limits it); beyond it
  // allocations throw OutOfMemory, as when the device itself runs out.
  explicit CudaCachingAllocator(int64_t limit_bytes = 0, DeviceMemoryCalls calls = {})
      : limit_(limit_bytes), calls_(std::move(calls)) {}
  ~CudaCachingAllocator() override;
  CudaCachingAllocator(const CudaCachingAllocator&) = delete;
  CudaCachingAllocator& operator=(const CudaCachingAllocator&) = delete;

  // cudaFree's every cached block. A block whose cudaFree fails stays cached and counted as
  // reserved (the device still holds it), and the failure is thrown after the others are freed.
  void release_cached() override;
  bool on_device() const override { return true; }

  // Multiple of 512 bytes, as PyTorch's CUDA allocator rounds small blocks.
  static int64_t rounded_size(int64_t bytes);
  int64_t cached_blocks() const { return static_cast<int64_t>(free_blocks_.size()); }

 protected:
  void* do_allocate(int64_t bytes) override;
  void do_deallocate(void* ptr, int64_t bytes) override;

 private:
  // cudaMalloc, or nullptr when the device is out of memory (other errors throw).
  void* system_allocate(int64_t size);

  int64_t limit_;
  DeviceMemoryCalls calls_;
  std::multimap<int64_t, void*> free_blocks_;  // rounded size -> block
};

}  // namespace convbench::cuda

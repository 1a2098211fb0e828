// Device memory for the CUDA backend: cudaMalloc'd blocks cached by exact rounded size, like
// CachingHostAllocator (and PyTorch's CUDA caching allocator for one stream), so that timed loops
// make no cudaMalloc/cudaFree calls after warm-up. Every tensor and every workspace the CUDA
// backend touches comes from here, so the statistics mean what they mean on the host backends.
//
// Blocks are reused without synchronisation: the backend queues all work on one stream, so a
// kernel that reads a freed block is ordered before any later kernel that writes its next owner.
#pragma once

#include <map>

#include "runtime/allocator.hpp"

namespace convbench::cuda {

class CudaCachingAllocator final : public Allocator {
 public:
  // `limit_bytes` caps reserved memory (0: only the device's memory limits it); beyond it
  // allocations throw OutOfMemory, as when the device itself runs out.
  explicit CudaCachingAllocator(int64_t limit_bytes = 0) : limit_(limit_bytes) {}
  ~CudaCachingAllocator() override;
  CudaCachingAllocator(const CudaCachingAllocator&) = delete;
  CudaCachingAllocator& operator=(const CudaCachingAllocator&) = delete;

  // cudaFree's every cached block.
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
  std::multimap<int64_t, void*> free_blocks_;  // rounded size -> block
};

}  // namespace convbench::cuda

// The free lists both caching allocators share (host: CachingHostAllocator; CUDA:
// cuda::CudaCachingAllocator), like PyTorch's caching allocators: a freed block is kept under its
// rounded size and handed out again for the same rounded size, so that timed loops make no
// system allocations after warm-up. Each allocator supplies only its system calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runtime/allocator.hpp"

namespace convbench {

class CachingAllocator : public Allocator {
 public:
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Multiple of 512 bytes, as PyTorch rounds small blocks.
  static int64_t rounded_size(int64_t bytes);
  int64_t cached_blocks() const { return static_cast<int64_t>(free_blocks_.size()); }

  // Gives every cached block back to the system. A block the system refuses to take back stays
  // cached and counted as reserved (the system still holds it); report_release_failures() then
  // says so, after the other blocks are freed.
  void release_cached() final;

 protected:
  // `reserve_limit_bytes` caps reserved memory (0: only the system limits it); beyond it
  // allocations throw OutOfMemory, as when the system itself runs out.
  explicit CachingAllocator(int64_t reserve_limit_bytes) : reserve_limit_(reserve_limit_bytes) {}
  // Derived destructors call release_cached(): here the system calls are already gone.
  ~CachingAllocator() override = default;

  // `size` bytes (a rounded size) from the system, aligned to at least 256 bytes, or nullptr when
  // the system is out of memory; other failures throw.
  virtual void* system_allocate(int64_t size) = 0;
  // Returns a block to the system; false when the system refused (the block stays cached).
  virtual bool system_free(void* block) = 0;
  // Called once at the end of release_cached(); throws when system_free() refused a block.
  virtual void report_release_failures() {}
  // What the OutOfMemory error says when neither the cache nor the system has `size` bytes.
  virtual std::string out_of_memory_detail(int64_t size) const = 0;

  // Whether reserving `size` more bytes would pass the reserve limit.
  bool over_reserve_limit(int64_t size) const { return reserve_limit_ > 0 && stats().reserved + size > reserve_limit_; }
  int64_t reserve_limit() const { return reserve_limit_; }

 private:
  void* do_allocate(int64_t bytes) final;
  void do_deallocate(void* ptr, int64_t bytes) final;

  int64_t reserve_limit_;
  std::multimap<int64_t, void*> free_blocks_;  // rounded size -> block
};

}  // namespace convbench

// Host allocator that caches freed blocks by rounded size, like PyTorch's caching allocators, so
// that timed loops make no system allocations after warm-up.
#pragma once

#include <map>
#include <vector>

#include "runtime/allocator.hpp"

namespace convbench {

class CachingHostAllocator final : public Allocator {
 public:
  // `limit_bytes` caps reserved memory (0: no cap); beyond it allocations throw OutOfMemory.
  explicit CachingHostAllocator(int64_t limit_bytes = 0) : limit_(limit_bytes) {}
  ~CachingHostAllocator() override;
  CachingHostAllocator(const CachingHostAllocator&) = delete;
  CachingHostAllocator& operator=(const CachingHostAllocator&) = delete;

  void release_cached() override;
  bool on_device() const override { return false; }

  static int64_t rounded_size(int64_t bytes);  // multiple of 512 bytes, as PyTorch

 protected:
  void* do_allocate(int64_t bytes) override;
  void do_deallocate(void* ptr, int64_t bytes) override;

 private:
  int64_t limit_;
  std::multimap<int64_t, void*> free_blocks_;  // rounded size -> block
};

}  // namespace convbench

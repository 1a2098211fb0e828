// Host memory for the reference and cpu backends: aligned_alloc'd blocks behind the shared free
// lists of CachingAllocator.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/caching_allocator.hpp"

namespace convbench {

class CachingHostAllocator final : public CachingAllocator {
 public:
  // `limit_bytes` caps reserved memory (0: no cap); beyond it allocations throw OutOfMemory.
  explicit CachingHostAllocator(int64_t limit_bytes = 0) : CachingAllocator(limit_bytes) {}
  ~CachingHostAllocator() override { release_cached(); }
  bool on_device() const override { return false; }

 protected:
  void* system_allocate(int64_t size) override;
  bool system_free(void* block) override;
  std::string out_of_memory_detail(int64_t size) const override;
};

}  // namespace convbench

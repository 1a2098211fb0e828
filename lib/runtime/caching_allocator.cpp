#include "runtime/caching_allocator.hpp"

namespace convbench {

namespace {
constexpr int64_t kRound = 512;
}  // namespace

int64_t CachingAllocator::rounded_size(int64_t bytes) { return (bytes + kRound - 1) / kRound * kRound; }

void* CachingAllocator::do_allocate(int64_t bytes) {
  const int64_t size = rounded_size(bytes);
  // Exact size class only: reusing a larger block would make `reserved` depend on history.
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end()) {
    void* p = it->second;
    free_blocks_.erase(it);
    return p;
  }
  void* p = over_reserve_limit(size) ? nullptr : system_allocate(size);
  if (p == nullptr) {
    // Cached blocks of other sizes may be what stands in the way: give them back and retry once.
    release_cached();
    p = over_reserve_limit(size) ? nullptr : system_allocate(size);
  }
  if (p == nullptr) throw OutOfMemory(bytes, out_of_memory_detail(size));
  mutable_stats().on_reserve(size);
  return p;
}

void CachingAllocator::do_deallocate(void* ptr, int64_t bytes) { free_blocks_.emplace(rounded_size(bytes), ptr); }

void CachingAllocator::release_cached() {
  for (auto it = free_blocks_.begin(); it != free_blocks_.end();) {
    if (!system_free(it->second)) {
      ++it;
      continue;
    }
    mutable_stats().on_reserve(-it->first);
    it = free_blocks_.erase(it);
  }
  report_release_failures();
}

}  // namespace convbench

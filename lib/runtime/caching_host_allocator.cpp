#include "runtime/caching_host_allocator.hpp"

#include <cstdlib>
#include <new>

namespace convbench {

namespace {
constexpr int64_t kRound = 512;
constexpr size_t kAlignment = 256;
}  // namespace

int64_t CachingHostAllocator::rounded_size(int64_t bytes) { return (bytes + kRound - 1) / kRound * kRound; }

CachingHostAllocator::~CachingHostAllocator() { release_cached(); }

void* CachingHostAllocator::do_allocate(int64_t bytes) {
  const int64_t size = rounded_size(bytes);
  // Exact size class only: reusing a larger block would make `reserved` depend on history.
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end()) {
    void* p = it->second;
    free_blocks_.erase(it);
    return p;
  }
  if (limit_ > 0 && stats().reserved + size > limit_) {
    release_cached();
    if (stats().reserved + size > limit_)
      throw OutOfMemory(bytes, "host allocator limit " + std::to_string(limit_) + " bytes");
  }
  void* p = std::aligned_alloc(kAlignment, static_cast<size_t>(size));
  if (!p) throw OutOfMemory(bytes, "aligned_alloc failed");
  mutable_stats().on_reserve(size);
  return p;
}

void CachingHostAllocator::do_deallocate(void* ptr, int64_t bytes) { free_blocks_.emplace(rounded_size(bytes), ptr); }

void CachingHostAllocator::release_cached() {
  for (auto& [size, p] : free_blocks_) {
    std::free(p);
    mutable_stats().on_reserve(-size);
  }
  free_blocks_.clear();
}

}  // namespace convbench

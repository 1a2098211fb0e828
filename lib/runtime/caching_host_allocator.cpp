#include "runtime/caching_host_allocator.hpp"

#include <cstdlib>

namespace convbench {

namespace {
constexpr size_t kAlignment = 256;
}  // namespace

void* CachingHostAllocator::system_allocate(int64_t size) {
  return std::aligned_alloc(kAlignment, static_cast<size_t>(size));
}

bool CachingHostAllocator::system_free(void* block) {
  std::free(block);
  return true;
}

std::string CachingHostAllocator::out_of_memory_detail(int64_t size) const {
  return over_reserve_limit(size) ? "host allocator limit " + std::to_string(reserve_limit()) + " bytes"
                                  : "aligned_alloc failed";
}

}  // namespace convbench

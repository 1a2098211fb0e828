#include "runtime/allocator.hpp"

namespace convbench {

OutOfMemory::OutOfMemory(int64_t requested, const std::string& detail)
    : std::runtime_error("out of memory: " + std::to_string(requested) + " bytes requested (" + detail + ")"),
      requested_(requested) {}

void* Allocator::allocate(int64_t bytes, MemoryCategory category) {
  if (bytes <= 0) throw std::invalid_argument("allocate: size must be positive");
  if (limit_ > 0 && stats_.current + bytes > limit_)
    throw OutOfMemory(bytes, std::to_string(stats_.current) + " bytes in use, limit " + std::to_string(limit_));
  void* p = do_allocate(bytes);
  stats_.on_allocate(bytes, category);
  return p;
}

void Allocator::deallocate(void* ptr, int64_t bytes, MemoryCategory category) {
  if (!ptr) return;
  do_deallocate(ptr, bytes);
  stats_.on_free(bytes, category);
}

}  // namespace convbench

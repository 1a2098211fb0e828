#include "runtime/workspace_arena.hpp"

#include <stdexcept>
#include <string>

namespace convbench {

void* WorkspaceArena::take(int64_t bytes) {
  const int64_t size = arena_bytes(bytes);
  if (base_ == nullptr || used_ + size > bytes_)
    throw std::logic_error("workspace arena: " + std::to_string(bytes) + " bytes asked, " +
                           std::to_string(bytes_ - used_) + " of " + std::to_string(bytes_) +
                           " left (workspace_bytes() did not count them)");
  void* p = base_ + used_;
  used_ += size;
  return p;
}

}  // namespace convbench

// The allocator interface every backend's memory goes through, so that statistics mean the same
// thing on the reference, cpu and cuda backends.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "runtime/memory_stats.hpp"

namespace convbench {

// Thrown when an allocation cannot be satisfied; the variant's row gets status "oom".
class OutOfMemory : public std::runtime_error {
 public:
  OutOfMemory(int64_t requested, const std::string& detail);
  int64_t requested() const { return requested_; }

 private:
  int64_t requested_;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for `bytes` (> 0) bytes, aligned to at least 256 bytes.
  void* allocate(int64_t bytes, MemoryCategory category);
  void deallocate(void* ptr, int64_t bytes, MemoryCategory category);
  // Returns cached blocks to the system (reserved bytes drop; requested bytes are unchanged).
  virtual void release_cached() = 0;
  virtual bool on_device() const = 0;

  const MemoryStats& stats() const { return stats_; }
  void reset_peak() { stats_.reset_peak(); }
  // Caps the requested bytes live at once (0: no cap): an allocation beyond it throws
  // OutOfMemory, as a smaller device would. Lets a run emulate a device with less memory.
  void set_limit(int64_t bytes) { limit_ = bytes; }
  int64_t limit() const { return limit_; }

 protected:
  // Implementations call stats().on_reserve() when they go to the system.
  virtual void* do_allocate(int64_t bytes) = 0;
  virtual void do_deallocate(void* ptr, int64_t bytes) = 0;
  MemoryStats& mutable_stats() { return stats_; }

 private:
  MemoryStats stats_;
  int64_t limit_ = 0;
};

}  // namespace convbench

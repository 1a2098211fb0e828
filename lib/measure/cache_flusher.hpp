// Cold-cache measurement (--cold): before each sample, stream through a buffer larger than the
// last-level cache so the sample starts with none of its data cached — nvbench's "cold" runs and
// llm.c's L2 scrub. One buffer, allocated once, outside the measured allocator.
#pragma once

#include <cstdint>
#include <vector>

namespace convbench {

class CacheFlusher {
 public:
  // `bytes` 0: twice the host's last-level cache (from sysfs; 64 MiB when unknown).
  explicit CacheFlusher(int64_t bytes = 0);
  void flush();
  int64_t bytes() const { return static_cast<int64_t>(buffer_.size()); }

  static int64_t last_level_cache_bytes();  // 0 when unknown

 private:
  std::vector<unsigned char> buffer_;
  unsigned char pass_ = 0;
};

}  // namespace convbench

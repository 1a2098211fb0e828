#include "measure/cache_flusher.hpp"

#include <cstring>
#include <fstream>
#include <string>

namespace convbench {

int64_t CacheFlusher::last_level_cache_bytes() {
  int64_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    int64_t value = std::stoll(text);
    const char unit = text.back();
    if (unit == 'K') value *= 1024;
    if (unit == 'M') value *= 1024 * 1024;
    if (value > largest) largest = value;
  }
  return largest;
}

CacheFlusher::CacheFlusher(int64_t bytes) {
  if (bytes <= 0) {
    const int64_t llc = last_level_cache_bytes();
    bytes = llc > 0 ? 2 * llc : int64_t{64} << 20;
  }
  buffer_.assign(static_cast<size_t>(bytes), 0);
}

void CacheFlusher::flush() {
  // Writing (not just reading) evicts dirty lines of the measured data too.
  std::memset(buffer_.data(), ++pass_, buffer_.size());
  asm volatile("" : : "r"(buffer_.data()) : "memory");  // keep the stores
}

}  // namespace convbench

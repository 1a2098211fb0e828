#include "measure/host_memory.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace convbench {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A decimal byte count at the start of `text` ("8589934592\n"); nullopt for "max" or garbage.
std::optional<int64_t> bytes_in(const std::string& text) {
  int64_t v = 0;
  size_t digits = 0;
  for (char c : text) {
    if (c < '0' || c > '9') break;
    if (v > (INT64_MAX - (c - '0')) / 10) return std::nullopt;
    v = v * 10 + (c - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return v;
}

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

std::optional<HostMemory> host_memory_from(const std::string& meminfo, const std::string& limit,
                                           const std::string& usage, const std::string& limit_name) {
  std::optional<HostMemory> best;
  const size_t at = meminfo.find("MemAvailable:");
  if (at != std::string::npos) {
    size_t p = at + 13;
    while (p < meminfo.size() && meminfo[p] == ' ') ++p;
    if (const auto kib = bytes_in(meminfo.substr(p)); kib && *kib <= INT64_MAX / 1024)
      best = HostMemory{*kib * 1024, "MemAvailable " + gib(*kib * 1024)};
  }
  const auto max = bytes_in(limit), used = bytes_in(usage);
  if (max && used) {
    const int64_t left = *max > *used ? *max - *used : 0;
    if (!best || left < best->available_bytes)
      best = HostMemory{left, "cgroup " + limit_name + " " + gib(*max) + " with " + gib(*used) + " in use"};
  }
  return best;
}

std::optional<HostMemory> host_memory_available() {
  const std::string meminfo = read_text("/proc/meminfo");
  // cgroup v2 first (unified hierarchy), then v1's memory controller.
  std::string limit = read_text("/sys/fs/cgroup/memory.max");
  if (!limit.empty()) return host_memory_from(meminfo, limit, read_text("/sys/fs/cgroup/memory.current"), "memory.max");
  limit = read_text("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  return host_memory_from(meminfo, limit, read_text("/sys/fs/cgroup/memory/memory.usage_in_bytes"),
                          "memory.limit_in_bytes");
}

}  // namespace convbench

// The memory this process may still use on the host: the smaller of what the kernel says is
// available (MemAvailable in /proc/meminfo) and what the cgroup it runs in allows beyond its
// current use (cgroup v2 memory.max - memory.current, or v1 memory.limit_in_bytes -
// memory.usage_in_bytes). The cpu and reference backends allocate host memory: a variant whose
// predicted peak does not fit would get the whole process killed by the kernel (no rows, no
// JSON), so the runner gives that row status `oom` instead and runs the others.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace convbench {

struct HostMemory {
  int64_t available_bytes = 0;
  std::string source;  // what limits it, for the row's message: "MemAvailable", "cgroup memory.max 8.00 GiB"
};

// nullopt when neither /proc/meminfo nor a cgroup limit can be read.
std::optional<HostMemory> host_memory_available();

// The parts, for tests: `meminfo` is /proc/meminfo's text; `limit` and `usage` are a cgroup's
// files' text ("max" for no limit), empty when absent.
std::optional<HostMemory> host_memory_from(const std::string& meminfo, const std::string& limit,
                                           const std::string& usage, const std::string& limit_name);

}  // namespace convbench

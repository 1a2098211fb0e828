// The clock a backend computes at, read before and after timing so that a run can say when the
// device slowed down under it (a GPU throttling for heat or power, a CPU leaving its boost
// clock): times taken after such a drop are slower than the device's steady state.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace convbench {

struct ClockReading {
  std::string domain;  // "sm" (a GPU's streaming multiprocessors) or "cpu" (the host's cores)
  double mhz = 0;
  // Why the clock is held below its maximum, when the device says (NVML's clock event reasons
  // such as "sw_power_cap", "hw_thermal_slowdown"); empty when it does not or nothing limits it.
  std::vector<std::string> limits;
};

// The host CPU's clock: the fastest core's current frequency from cpufreq
// (/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq), else from /proc/cpuinfo's "cpu MHz"
// lines; nullopt when neither is readable. The fastest core, not the mean: on a machine with
// more cores than the run keeps busy, idle cores' clocks wander and would drown the busy ones'.
// A thermal or power limit lowers every core, the fastest included.
std::optional<ClockReading> read_host_cpu_clock();

// The highest "cpu MHz" of a /proc/cpuinfo text; nullopt when there is none.
std::optional<double> fastest_cpuinfo_mhz(std::istream& cpuinfo);

}  // namespace convbench

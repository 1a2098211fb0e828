#include "runtime/device_clock.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace convbench {
namespace {

// The highest of every readable cpu*/cpufreq/scaling_cur_freq (kHz), in MHz.
std::optional<double> fastest_cpufreq_mhz() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::optional<double> fastest;
  for (const fs::directory_entry& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() == 3 || name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    std::ifstream in(e.path() / "cpufreq" / "scaling_cur_freq");
    double khz = 0;
    if (in >> khz && khz > 0) fastest = std::max(fastest.value_or(0.0), khz / 1000.0);
  }
  return fastest;
}

}  // namespace

std::optional<double> fastest_cpuinfo_mhz(std::istream& cpuinfo) {
  std::optional<double> fastest;
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    try {
      const double mhz = std::stod(line.substr(colon + 1));
      if (mhz > 0) fastest = std::max(fastest.value_or(0.0), mhz);
    } catch (const std::exception&) {
      // a malformed line says nothing about the clock
    }
  }
  return fastest;
}

std::optional<ClockReading> read_host_cpu_clock() {
  std::optional<double> mhz = fastest_cpufreq_mhz();
  if (!mhz) {
    std::ifstream in("/proc/cpuinfo");
    if (in) mhz = fastest_cpuinfo_mhz(in);
  }
  if (!mhz) return std::nullopt;
  return ClockReading{"cpu", *mhz, {}};
}

}  // namespace convbench

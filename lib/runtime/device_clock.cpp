#include "runtime/device_clock.hpp"

#include <filesystem>
#include <fstream>
#include <string>

namespace convbench {
namespace {

// The mean of every readable cpu*/cpufreq/scaling_cur_freq (kHz), in MHz.
std::optional<double> mean_cpufreq_mhz() {
  namespace fs = std::filesystem;
  std::error_code ec;
  double sum = 0;
  int count = 0;
  for (const fs::directory_entry& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() == 3 || name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    std::ifstream in(e.path() / "cpufreq" / "scaling_cur_freq");
    double khz = 0;
    if (in >> khz && khz > 0) {
      sum += khz / 1000.0;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

}  // namespace

std::optional<double> mean_cpuinfo_mhz(std::istream& cpuinfo) {
  double sum = 0;
  int count = 0;
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    try {
      const double mhz = std::stod(line.substr(colon + 1));
      if (mhz > 0) {
        sum += mhz;
        ++count;
      }
    } catch (const std::exception&) {
      // a malformed line says nothing about the clock
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

std::optional<ClockReading> read_host_cpu_clock() {
  std::optional<double> mhz = mean_cpufreq_mhz();
  if (!mhz) {
    std::ifstream in("/proc/cpuinfo");
    if (in) mhz = mean_cpuinfo_mhz(in);
  }
  if (!mhz) return std::nullopt;
  return ClockReading{"cpu", *mhz, {}};
}

}  // namespace convbench

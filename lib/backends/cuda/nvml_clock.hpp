// The GPU's current SM clock and what holds it down, from NVML (the library behind nvidia-smi),
// for the clock-drop warning of `compare`. NVML ships with the driver, not the toolkit, so it is
// opened at run time with dlopen: a machine without a driver (CI) still runs this binary, and a
// GPU machine without NVML simply reports no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device_clock.hpp"

namespace convbench::cuda {

// NVML's clock event ("throttle") reason bits as names, lowest bit first: 0x4 ->
// {"sw_power_cap"}, 0x60 -> {"sw_thermal_slowdown", "hw_thermal_slowdown"}; unknown bits as hex.
std::vector<std::string> clock_limit_names(uint64_t reasons);

class NvmlClock {
 public:
  // Opens NVML and finds the device with `pci_bus_id` (cudaDeviceGetPCIBusId's text). Never
  // throws; unavailable() says why when NVML cannot be used.
  explicit NvmlClock(const std::string& pci_bus_id);
  ~NvmlClock();
  NvmlClock(const NvmlClock&) = delete;
  NvmlClock& operator=(const NvmlClock&) = delete;

  const std::optional<std::string>& unavailable() const { return unavailable_; }
  // The SM clock now, with the reasons it is below its maximum; nullopt when NVML cannot say.
  std::optional<ClockReading> read() const;
  // Processes other than this one with a context on the device (compute and graphics); nullopt
  // when NVML cannot say. Inside a container NVML reports the host's process ids, which do not
  // match getpid(); this process always holds a context on the device it runs on, so it is
  // counted out by number, not by id.
  std::optional<int> other_processes() const;

 private:
  struct Api;
  void* library_ = nullptr;
  Api* api_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  bool initialised_ = false;
  std::optional<std::string> unavailable_;
};

}  // namespace convbench::cuda

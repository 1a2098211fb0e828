#include "backends/cuda/nvml_clock.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace convbench::cuda {
namespace {

// NVML's C interface, declared here because the toolkit does not ship nvml.h everywhere (it is
// not in this project's CI image); these signatures and values are NVML's stable ABI.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // nvmlClockType_t NVML_CLOCK_SM
constexpr NvmlReturn kNvmlInsufficientSize = 7;

// nvmlProcessInfo_t (the v2/v3 layout of nvmlDeviceGet*RunningProcesses_v3).
struct NvmlProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

struct Reason {
  uint64_t bit;
  const char* name;
};
// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*).
constexpr Reason kReasons[] = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

}  // namespace

struct NvmlClock::Api {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*handle_by_pci_bus_id)(const char*, void**) = nullptr;
  NvmlReturn (*clock_info)(void*, int, unsigned*) = nullptr;
  NvmlReturn (*clock_reasons)(void*, unsigned long long*) = nullptr;  // optional
  using ProcessQuery = NvmlReturn (*)(void*, unsigned*, NvmlProcessInfo*);
  ProcessQuery compute_processes = nullptr;   // optional
  ProcessQuery graphics_processes = nullptr;  // optional
};

std::vector<std::string> clock_limit_names(uint64_t reasons) {
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const Reason& r : kReasons) {
    known |= r.bit;
    if (reasons & r.bit) names.emplace_back(r.name);
  }
  if (const uint64_t rest = reasons & ~known) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(rest));
    names.emplace_back(hex);
  }
  return names;
}

NvmlClock::NvmlClock(const std::string& pci_bus_id) : api_(new Api) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char* why = dlerror();
    unavailable_ = std::string("NVML not loadable: ") + (why ? why : "libnvidia-ml.so.1 not found");
    return;
  }
  auto symbol = [&](const char* name) { return dlsym(library_, name); };
  api_->init = reinterpret_cast<NvmlReturn (*)()>(symbol("nvmlInit_v2"));
  api_->shutdown = reinterpret_cast<NvmlReturn (*)()>(symbol("nvmlShutdown"));
  api_->error_string = reinterpret_cast<const char* (*)(NvmlReturn)>(symbol("nvmlErrorString"));
  api_->handle_by_pci_bus_id =
      reinterpret_cast<NvmlReturn (*)(const char*, void**)>(symbol("nvmlDeviceGetHandleByPciBusId_v2"));
  api_->clock_info = reinterpret_cast<NvmlReturn (*)(void*, int, unsigned*)>(symbol("nvmlDeviceGetClockInfo"));
  void* reasons = symbol("nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons) reasons = symbol("nvmlDeviceGetCurrentClocksThrottleReasons");
  api_->clock_reasons = reinterpret_cast<NvmlReturn (*)(void*, unsigned long long*)>(reasons);
  api_->compute_processes = reinterpret_cast<Api::ProcessQuery>(symbol("nvmlDeviceGetComputeRunningProcesses_v3"));
  api_->graphics_processes = reinterpret_cast<Api::ProcessQuery>(symbol("nvmlDeviceGetGraphicsRunningProcesses_v3"));
  if (!api_->init || !api_->shutdown || !api_->handle_by_pci_bus_id || !api_->clock_info) {
    unavailable_ = "NVML lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetClockInfo";
    return;
  }
  auto failed = [&](const char* call, NvmlReturn status) {
    unavailable_ = std::string(call) + " failed: " +
                   (api_->error_string ? api_->error_string(status) : "NVML error " + std::to_string(status));
  };
  if (const NvmlReturn s = api_->init(); s != kNvmlSuccess) {
    failed("nvmlInit_v2", s);
    return;
  }
  initialised_ = true;
  if (const NvmlReturn s = api_->handle_by_pci_bus_id(pci_bus_id.c_str(), &device_); s != kNvmlSuccess)
    failed("nvmlDeviceGetHandleByPciBusId_v2", s);
}

NvmlClock::~NvmlClock() {
  if (initialised_) api_->shutdown();
  if (library_) dlclose(library_);
  delete api_;
}

std::optional<ClockReading> NvmlClock::read() const {
  if (unavailable_) return std::nullopt;
  unsigned mhz = 0;
  if (api_->clock_info(device_, kNvmlClockSm, &mhz) != kNvmlSuccess || mhz == 0) return std::nullopt;
  ClockReading reading{"sm", static_cast<double>(mhz), {}};
  unsigned long long reasons = 0;
  if (api_->clock_reasons && api_->clock_reasons(device_, &reasons) == kNvmlSuccess)
    reading.limits = clock_limit_names(reasons);
  return reading;
}

std::optional<int> NvmlClock::other_processes() const {
  if (unavailable_ || !api_->compute_processes) return std::nullopt;
  std::vector<unsigned> pids;
  for (const Api::ProcessQuery query : {api_->compute_processes, api_->graphics_processes}) {
    if (!query) continue;
    std::vector<NvmlProcessInfo> infos(64);
    unsigned count = static_cast<unsigned>(infos.size());
    NvmlReturn s = query(device_, &count, infos.data());
    if (s == kNvmlInsufficientSize) {  // count now holds the number needed
      infos.resize(count + 8);
      count = static_cast<unsigned>(infos.size());
      s = query(device_, &count, infos.data());
    }
    if (s != kNvmlSuccess) return std::nullopt;
    for (unsigned i = 0; i < count && i < infos.size(); ++i) pids.push_back(infos[i].pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());  // one process may be in both lists
  return std::max(0, static_cast<int>(pids.size()) - 1);
}

}  // namespace convbench::cuda

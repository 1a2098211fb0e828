#include "backends/cuda/cuda_device.hpp"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <sstream>

#include "backends/cuda/cuda_check.hpp"

#ifndef CONVBENCH_CUDA_ARCHITECTURES
#error "CONVBENCH_CUDA_ARCHITECTURES must be defined by the build (cmake/cuda.cmake)"
#endif

namespace convbench::cuda {

std::string compiled_architectures() { return CONVBENCH_CUDA_ARCHITECTURES; }

int lowest_architecture(const std::string& architectures) {
  int lowest = 0;
  std::string list = architectures;
  std::replace(list.begin(), list.end(), ',', ';');
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ';')) {
    size_t digits = 0;
    while (digits < item.size() && item[digits] >= '0' && item[digits] <= '9') ++digits;
    if (digits == 0) continue;  // "native", "all": nothing to compare against
    const int arch = std::stoi(item.substr(0, digits));
    lowest = lowest == 0 ? arch : std::min(lowest, arch);
  }
  return lowest;
}

namespace {
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

std::string describe_unavailable(int status, const std::string& status_text, int driver_version, int runtime_version) {
  const std::string detail = " (CUDA runtime: " + status_text + ")";
  if (driver_version <= 0 || status == cudaErrorNoDevice) return "no NVIDIA driver or GPU found" + detail;
  if (status == cudaErrorInsufficientDriver)
    return "the NVIDIA driver supports CUDA " + cuda_version_text(driver_version) + ", older than the CUDA " +
           cuda_version_text(runtime_version) + " runtime this convbench was built with: update the driver" + detail;
  return "the GPU is not usable" + detail;
}

std::optional<std::string> cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    (void)cudaGetLastError();
    return describe_unavailable(status, cudaGetErrorString(status), driver, runtime);
  }
  if (count == 0) return std::string("no NVIDIA GPU found (the driver is installed but reports no device)");
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    const cudaError_t e = cudaGetLastError();
    return std::string("CUDA device not usable: ") + cudaGetErrorString(e);
  }
  const int cc = prop.major * 10 + prop.minor;
  const int lowest = lowest_architecture(compiled_architectures());
  if (lowest > 0 && cc < lowest)
    return std::string(prop.name) + " has compute capability " + std::to_string(prop.major) + "." +
           std::to_string(prop.minor) + ", older than this build's architectures (" + compiled_architectures() +
           "); reconfigure with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(cc);
  // libcudnn is linked, but its engine libraries load lazily: make sure the shim works.
  if (cudnnGetVersion() == 0) return std::string("cuDNN is not usable (cudnnGetVersion returned 0)");
  return std::nullopt;
}

nlohmann::json device_info() {
  int device = 0;
  CONVBENCH_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CONVBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0, sm_clock_khz = 0, memory_clock_khz = 0, bus_width = 0;
  CONVBENCH_CUDA_CHECK(cudaDriverGetVersion(&driver));
  CONVBENCH_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes remain.
  CONVBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device));
  CONVBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device));
  CONVBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, device));
  const size_t cudnn = cudnnGetVersion();
  return {
      {"gpu", prop.name},
      {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
      {"memory_bytes", static_cast<int64_t>(prop.totalGlobalMem)},
      {"multiprocessors", prop.multiProcessorCount},
      {"l2_cache_bytes", prop.l2CacheSize},
      {"sm_clock_max_mhz", sm_clock_khz / 1000},  // the peak (boost) clock; the current one is NVML's
      {"memory_clock_mhz", memory_clock_khz / 1000},
      {"memory_bus_bits", bus_width},
      {"driver_cuda_version", cuda_version_text(driver)},
      {"runtime_cuda_version", cuda_version_text(runtime)},
      {"cudnn_runtime_version",
       std::to_string(cudnn / 10000) + "." + std::to_string(cudnn % 10000 / 100) + "." + std::to_string(cudnn % 100)},
      {"compiled_architectures", compiled_architectures()},
  };
}

}  // namespace convbench::cuda

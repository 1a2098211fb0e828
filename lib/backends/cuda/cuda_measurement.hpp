// The CUDA backend's measurement side (runtime/device_measurement.hpp): CUDA events on the
// backend's stream, from the first kernel a timed region queues (first_launch_start.hpp); the L2
// scrub for cold-cache samples; NVTX ranges; the SM clock from NVML; the GPU's description; and
// stream capture into CUDA graphs for `compare --graph`.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "backends/cuda/first_launch_start.hpp"
#include "backends/cuda/nvml_clock.hpp"
#include "runtime/device_measurement.hpp"

struct CUstream_st;

namespace convbench::cuda {

class CudaMeasurement final : public DeviceMeasurement {
 public:
  // Measures the GPU's limits for a dtype (cuda_limits.hpp, through the backend's allocator and
  // cuDNN path).
  using LimitsProbe = std::function<MeasuredLimits(DType)>;
  // `stream` and `first_launch` are the backend's, and outlive this object. `pci_bus_id` names
  // the GPU to NVML.
  CudaMeasurement(CUstream_st* stream, FirstLaunchStart& first_launch, const std::string& pci_bus_id,
                  LimitsProbe limits_probe);
  ~CudaMeasurement() override;
  CudaMeasurement(const CudaMeasurement&) = delete;
  CudaMeasurement& operator=(const CudaMeasurement&) = delete;

  // time_ms starts at the first kernel `work` queues, so the host's set-up before it is not
  // counted; gaps between kernels where the GPU waits for the host are.
  double time_ms(const std::function<void()>& work) override;
  // Evicts the GPU's L2 cache by writing a buffer twice its size on the stream (nvbench's cold
  // runs). The buffer is allocated on first use and kept outside the allocator's statistics: no
  // op ever sees it.
  bool flush_device_cache() override;
  void range_push(const std::string& name) override;
  void range_pop() override;
  // GPU name, compute capability, memory, clocks, driver / runtime / cuDNN versions, and whether
  // the SM clock can be monitored (NVML).
  nlohmann::json device_info() const override;
  // The SM clock from NVML (nullopt without NVML).
  std::optional<ClockReading> clock() const override { return nvml_->read(); }
  // Other compute and graphics processes on this GPU, from NVML (nullopt without NVML).
  std::optional<int> other_processes() const override { return nvml_->other_processes(); }
  // A 1 GiB copy and a 4096^3 cuDNN product in `dtype` (cuda_limits.hpp); nullopt for a dtype the
  // backend does not compute in (float64).
  std::optional<MeasuredLimits> measure_limits(DType dtype) override;
  std::optional<std::string> replay_unsupported() const override { return std::nullopt; }
  std::unique_ptr<ReplayableWork> capture(const std::function<void()>& work) override;

 private:
  CUstream_st* stream_;
  FirstLaunchStart& first_launch_;
  std::unique_ptr<NvmlClock> nvml_;
  LimitsProbe limits_probe_;
  void* l2_scrub_ = nullptr;
  size_t l2_scrub_bytes_ = 0;
  unsigned l2_flushes_ = 0;
};

}  // namespace convbench::cuda

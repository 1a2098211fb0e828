#include "backends/cuda/cuda_measurement.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <utility>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_event_timer.hpp"
#include "backends/cuda/cuda_graph.hpp"

namespace convbench::cuda {

namespace {

// A recorded step whose replay marks its launch, so that a timed replay starts at the launch.
class MarkedReplay final : public ReplayableWork {
 public:
  MarkedReplay(std::unique_ptr<ReplayableWork> inner, FirstLaunchStart& mark) : inner_(std::move(inner)), mark_(mark) {}
  void replay() override {
    mark_.before_launch();
    inner_->replay();
  }

 private:
  std::unique_ptr<ReplayableWork> inner_;
  FirstLaunchStart& mark_;
};

}  // namespace

CudaMeasurement::CudaMeasurement(CUstream_st* stream, FirstLaunchStart& first_launch, const std::string& pci_bus_id,
                                 LimitsProbe limits_probe)
    : stream_(stream),
      first_launch_(first_launch),
      nvml_(std::make_unique<NvmlClock>(pci_bus_id)),
      limits_probe_(std::move(limits_probe)) {}

std::optional<MeasuredLimits> CudaMeasurement::measure_limits(DType dtype) {
  if (dtype == DType::float64 || !limits_probe_) return std::nullopt;
  return limits_probe_(dtype);
}

CudaMeasurement::~CudaMeasurement() {
  if (l2_scrub_) {
    cudaStreamSynchronize(stream_);  // a queued scrub may still write the buffer
    cudaFree(l2_scrub_);
  }
}

double CudaMeasurement::time_ms(const std::function<void()>& work) {
  // Events on the stream time what the GPU did, from the first kernel `work` queues (the host's
  // set-up before it is not device time) to the end of the last; the stream is drained first so
  // earlier work is not counted.
  CONVBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EventTimer timer(stream_);
  first_launch_.arm([&timer] { timer.start(); });
  try {
    work();
  } catch (...) {
    first_launch_.disarm();
    throw;
  }
  if (!first_launch_.disarm()) timer.start();  // nothing was queued: an empty interval
  timer.stop();
  return timer.elapsed_ms();
}

bool CudaMeasurement::flush_device_cache() {
  if (l2_scrub_ == nullptr) {
    int device = 0, l2_bytes = 0;
    CONVBENCH_CUDA_CHECK(cudaGetDevice(&device));
    CONVBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    l2_scrub_bytes_ = 2 * static_cast<size_t>(std::max(l2_bytes, 1 << 20));
    CONVBENCH_CUDA_CHECK(cudaMalloc(&l2_scrub_, l2_scrub_bytes_));
  }
  // A different byte each time, so that no layer can skip the writes as redundant.
  CONVBENCH_CUDA_CHECK(cudaMemsetAsync(l2_scrub_, static_cast<int>(++l2_flushes_ & 0xff), l2_scrub_bytes_, stream_));
  return true;
}

void CudaMeasurement::range_push(const std::string& name) { nvtxRangePushA(name.c_str()); }

void CudaMeasurement::range_pop() { nvtxRangePop(); }

nlohmann::json CudaMeasurement::device_info() const {
  nlohmann::json info = cuda::device_info();
  info["sm_clock_monitor"] = nvml_->unavailable() ? "unavailable: " + *nvml_->unavailable() : std::string("nvml");
  if (const auto now = nvml_->read()) info["sm_clock_now_mhz"] = now->mhz;
  return info;
}

std::unique_ptr<ReplayableWork> CudaMeasurement::capture(const std::function<void()>& work) {
  return std::make_unique<MarkedReplay>(capture_cuda_graph(stream_, work), first_launch_);
}

}  // namespace convbench::cuda

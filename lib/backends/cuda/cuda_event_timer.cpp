#include "backends/cuda/cuda_event_timer.hpp"

#include <stdexcept>

#include "backends/cuda/cuda_check.hpp"

namespace convbench::cuda {

EventTimer::EventTimer(CUstream_st* stream) : stream_(stream) {
  CONVBENCH_CUDA_CHECK(cudaEventCreate(&start_));
  try {
    CONVBENCH_CUDA_CHECK(cudaEventCreate(&stop_));
  } catch (...) {
    cudaEventDestroy(start_);
    throw;
  }
}

EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void EventTimer::start() {
  CONVBENCH_CUDA_CHECK(cudaEventRecord(start_, stream_));
  started_ = true;
  stopped_ = false;
}

void EventTimer::stop() {
  if (!started_) throw std::logic_error("EventTimer::stop without start");
  CONVBENCH_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  stopped_ = true;
}

double EventTimer::elapsed_ms() {
  if (!stopped_) throw std::logic_error("EventTimer::elapsed_ms before stop");
  CONVBENCH_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0f;
  CONVBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

}  // namespace convbench::cuda

#include "measure/cpu_limits.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <dnnl.h>

#include "measure/host_activity.hpp"

namespace convbench {
namespace {

constexpr int64_t kGemmSize = 2048;               // 17 GFLOP per product: well past the caches
constexpr size_t kCopyBytes = size_t{256} << 20;  // far larger than any last-level cache
constexpr int kRepetitions = 5;                   // the best one is the limit

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double measure_gemm_flops() {
  const auto n = static_cast<size_t>(kGemmSize);
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n, 0.0f);
  double best = 0;
  for (int rep = 0; rep <= kRepetitions; ++rep) {  // the first one warms up and is not counted
    const auto t0 = std::chrono::steady_clock::now();
    if (dnnl_sgemm('N', 'N', kGemmSize, kGemmSize, kGemmSize, 1.0f, a.data(), kGemmSize, b.data(), kGemmSize, 0.0f,
                   c.data(), kGemmSize) != dnnl_success)
      throw std::runtime_error("oneDNN sgemm failed during calibration");
    const double s = seconds_since(t0);
    if (rep > 0 && s > 0) best = std::max(best, 2.0 * static_cast<double>(kGemmSize * kGemmSize * kGemmSize) / s);
  }
  return best;
}

double measure_copy_bandwidth() {
  const size_t n = kCopyBytes;
  std::vector<char> src(n), dst(n);
  double best = 0;
  for (int rep = 0; rep <= kRepetitions; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    // Each thread copies its own contiguous slice, as STREAM's copy does with static scheduling.
#pragma omp parallel
    {
      const auto threads = static_cast<size_t>(omp_get_num_threads());
      const auto t = static_cast<size_t>(omp_get_thread_num());
      const size_t begin = n * t / threads, end = n * (t + 1) / threads;
      std::memcpy(dst.data() + begin, src.data() + begin, end - begin);
    }
    const double s = seconds_since(t0);
    if (rep > 0 && s > 0) best = std::max(best, 2.0 * static_cast<double>(n) / s);
  }
  return best;
}

}  // namespace

CpuLimitsMeasurement measure_cpu_limits() {
  CpuLimitsMeasurement m;
  const HostActivitySnapshot before = read_host_activity();
  m.peak_flops = measure_gemm_flops();
  m.bandwidth_bytes_per_s = measure_copy_bandwidth();
  m.activity = host_activity_between(before, read_host_activity(), compute_threads(), cpu_affinity_count());
  m.method = "oneDNN sgemm 2048^3 and a 256 MiB copy, best of " + std::to_string(kRepetitions) + ", " +
             std::to_string(omp_get_max_threads()) + " threads";
  return m;
}

}  // namespace convbench

#include "measure/stopping_rule.hpp"

#include <chrono>
#include <cmath>

#include "results/sample_stats.hpp"

namespace convbench {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TimeStats measure_until_stable(const std::function<double()>& sample, const MeasureOptions& o,
                               const std::function<double()>& now_s, const std::function<void()>& warmed_up) {
  const double start = now_s();
  // Warm-up: the requested runs, then until two consecutive runs agree within 10% (caches,
  // allocator growth and lazily created primitives settle), bounded by a quarter of the timeout.
  double previous = -1;
  for (int i = 0;; ++i) {
    const double t = sample();
    const bool settled = previous > 0 && std::fabs(t - previous) <= 0.1 * previous;
    previous = t;
    if (i + 1 >= o.warmup_runs && (settled || now_s() - start > 0.25 * o.timeout_s)) break;
  }
  if (warmed_up) warmed_up();
  std::vector<double> samples;
  double measured_s = 0;
  const double sampling_start = now_s();
  // The median's confidence interval needs the samples sorted: it is checked when their number
  // has grown by a tenth since the last check, so sorting costs O(n log n) over the whole run
  // (a block of a millisecond takes thousands of samples) and overshoots by at most a tenth.
  size_t next_precision_check = 0;
  for (;;) {
    const double t = sample();
    samples.push_back(t);
    measured_s += t / 1000.0;
    const bool enough = static_cast<int>(samples.size()) >= o.min_samples && measured_s >= o.min_time_s;
    if (enough && relative_noise(samples) <= o.max_noise) return summarize(samples, "noise");
    if (enough && samples.size() >= next_precision_check) {
      if (median_precision(samples) <= o.max_noise) return summarize(samples, "precision");
      next_precision_check = samples.size() + std::max<size_t>(1, samples.size() / 10);
    }
    if (now_s() - sampling_start >= o.timeout_s && !samples.empty() &&
        static_cast<int>(samples.size()) >= std::min(o.min_samples, 2))
      return summarize(samples, "timeout");
  }
}

}  // namespace convbench

// When to stop taking samples: once at least `min_samples` samples and `min_time_s` seconds of
// measured time are in and either
//   - the relative noise (stdev / mean of the samples) is at most `max_noise` (nvbench's "stdrel"
//     criterion: the samples agree), or
//   - the median's 95% confidence interval is within +-`max_noise` of it (the samples vary, as
//     a CPU's do, but there are enough of them to pin the reported median down that closely:
//     more samples shrink that interval, while they never shrink the spread itself);
// or when `timeout_s` of wall time has passed, whatever the noise. The summary says which
// (`TimeStats::stop`).
#pragma once

#include <functional>

#include "results/results.hpp"

namespace convbench {

struct MeasureOptions {
  double max_noise = 0.005;
  double min_time_s = 0.5;
  int min_samples = 10;
  double timeout_s = 15.0;
  int warmup_runs = 1;  // at least one; warm-up also continues until two runs agree within 10%
};

// Calls `sample` (which returns one measured time in milliseconds) until the rule is met, after
// `options.warmup_runs` unrecorded warm-up calls. `now_s` gives wall time in seconds (injected so
// tests can drive the rule with synthetic streams). `warmed_up`, when given, is called once
// between the warm-up and the first recorded sample (the runner reads the device clock there,
// when the device has been busy long enough to have left its idle clock).
TimeStats measure_until_stable(const std::function<double()>& sample, const MeasureOptions& options,
                               const std::function<double()>& now_s, const std::function<void()>& warmed_up = {});

// Wall time in seconds from a steady clock.
double steady_seconds();

}  // namespace convbench

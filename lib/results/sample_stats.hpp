// Summary statistics of timing samples: median and quartiles (linear interpolation between
// order statistics, as numpy's default), mean, and relative noise (sample stdev / mean).
#pragma once

#include <vector>

#include "results/results.hpp"

namespace convbench {

double quantile(std::vector<double> sorted_or_not, double q);
double relative_noise(const std::vector<double>& samples);
TimeStats summarize(const std::vector<double>& samples_ms, bool noise_met);

}  // namespace convbench

// Summary statistics of timing samples: median and quartiles (linear interpolation between
// order statistics, as numpy's default), mean, and relative noise (sample stdev / mean).
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

double quantile(std::vector<double> sorted_or_not, double q);
double relative_noise(const std::vector<double>& samples);
// Half the width of the median's distribution-free 95% confidence interval (the order statistics
// at ranks n/2 -+ 1.96 sqrt(n)/2), over the median: how precisely the samples pin the median
// down, whatever their spread. Infinite for fewer than two samples.
double median_precision(std::vector<double> samples);
// Why sampling stopped (measure/stopping_rule.hpp): "noise" (stdev/mean reached the target),
// "precision" (the median's confidence interval did), "timeout" (neither, in time).
TimeStats summarize(const std::vector<double>& samples_ms, const std::string& stop);

}  // namespace convbench

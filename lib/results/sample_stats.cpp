#include "results/sample_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace convbench {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("quantile of no samples");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double relative_noise(const std::vector<double>& s) {
  if (s.size() < 2) return INFINITY;
  const double mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  double ss = 0;
  for (double x : s) ss += (x - mean) * (x - mean);
  const double stdev = std::sqrt(ss / static_cast<double>(s.size() - 1));
  return mean > 0 ? stdev / mean : INFINITY;
}

TimeStats summarize(const std::vector<double>& s, bool noise_met) {
  TimeStats t;
  t.raw_ms = s;
  t.median = quantile(s, 0.5);
  t.q1 = quantile(s, 0.25);
  t.q3 = quantile(s, 0.75);
  t.min = *std::min_element(s.begin(), s.end());
  t.max = *std::max_element(s.begin(), s.end());
  t.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  const double noise = relative_noise(s);
  t.noise = std::isfinite(noise) ? noise : 0.0;
  t.noise_met = noise_met;
  return t;
}

}  // namespace convbench

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

double median_precision(std::vector<double> s) {
  const size_t n = s.size();
  if (n < 2) return INFINITY;
  std::sort(s.begin(), s.end());
  const double half = 1.96 * std::sqrt(static_cast<double>(n)) / 2.0;
  const double centre = static_cast<double>(n) / 2.0;
  // 1-based ranks of the interval's ends, clamped to the samples.
  const auto lo = static_cast<size_t>(std::max(1.0, std::floor(centre - half)));
  const auto hi = static_cast<size_t>(std::min(static_cast<double>(n), std::ceil(centre + half + 1.0)));
  const double median = quantile(s, 0.5);
  return median > 0 ? (s[hi - 1] - s[lo - 1]) / (2.0 * median) : INFINITY;
}

TimeStats summarize(const std::vector<double>& s, const std::string& stop) {
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
  t.stop = stop;
  t.noise_met = stop != "timeout";
  return t;
}

}  // namespace convbench

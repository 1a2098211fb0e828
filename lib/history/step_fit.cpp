#include "history/step_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace convbench {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2.0;
  return m;
}

}  // namespace

double successive_difference_sd(const std::vector<double>& values) {
  if (values.size() < 3) return 0;
  std::vector<double> diffs;
  diffs.reserve(values.size() - 1);
  for (size_t i = 1; i < values.size(); ++i) diffs.push_back(values[i] - values[i - 1]);
  const double center = median_of(diffs);
  for (double& d : diffs) d = std::fabs(d - center);
  return 1.4826 * median_of(diffs) / std::sqrt(2.0);
}

StepFit fit_steps(const std::vector<double>& values, const StepFitOptions& options) {
  StepFit fit;
  const int n = static_cast<int>(values.size());
  const int min_seg = std::max(1, options.min_segment);
  auto whole = [&] {
    double sum = 0;
    for (double v : values) sum += v;
    fit.segments = {{0, n, n ? sum / n : 0}};
    return fit;
  };
  fit.noise_sd = successive_difference_sd(values);
  if (n < 2 * min_seg || !(fit.noise_sd > 0)) return whole();
  // Prefix sums give the squared error of any segment in O(1).
  std::vector<double> s(static_cast<size_t>(n) + 1, 0), s2(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    s[i + 1] = s[i] + values[i];
    s2[i + 1] = s2[i] + values[i] * values[i];
  }
  const double var = fit.noise_sd * fit.noise_sd;
  auto cost = [&](int a, int b) {  // squared error of [a, b) around its mean, in noise variances
    const double len = b - a, sum = s[b] - s[a];
    return std::max(0.0, (s2[b] - s2[a]) - sum * sum / len) / var;
  };
  const double beta = options.penalty_per_log_n * std::log(static_cast<double>(n));
  constexpr double inf = std::numeric_limits<double>::infinity();
  // best[t]: the least penalised cost of values [0, t); last[t]: where its last segment starts.
  std::vector<double> best(static_cast<size_t>(n) + 1, inf);
  std::vector<int> last(static_cast<size_t>(n) + 1, 0);
  best[0] = -beta;
  std::vector<int> candidates;  // segment starts PELT has not pruned
  for (int t = min_seg; t <= n; ++t) {
    if (const int c = t - min_seg; c == 0 || c >= min_seg) candidates.push_back(c);  // a start that can end a segment
    double here = inf;
    int arg = 0;
    for (int c : candidates) {
      if (t - c < min_seg || best[c] == inf) continue;
      const double v = best[c] + cost(c, t) + beta;
      if (v < here) {
        here = v;
        arg = c;
      }
    }
    best[t] = here;
    last[t] = arg;
    // PELT: a start whose cost up to t, before the next change's penalty, already exceeds the best
    // cost of [0, t) can never be the best start later (the squared error only grows with t).
    std::erase_if(candidates, [&](int c) { return t - c >= min_seg && best[c] + cost(c, t) > here; });
  }
  std::vector<Segment> segments;
  for (int t = n; t > 0; t = last[t]) {
    const int b = last[t];
    segments.push_back({b, t, (s[t] - s[b]) / (t - b)});
  }
  std::reverse(segments.begin(), segments.end());
  fit.segments = std::move(segments);
  return fit;
}

}  // namespace convbench

#include "history/rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace convbench {

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

RankTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  RankTest t;
  const double n1 = static_cast<double>(x.size()), n2 = static_cast<double>(y.size());
  if (x.empty() || y.empty()) return t;
  // Rank the pooled values (1-based, ties share their mean rank); remember which came from x.
  std::vector<std::pair<double, bool>> all;
  all.reserve(x.size() + y.size());
  for (double v : x) all.emplace_back(v, true);
  for (double v : y) all.emplace_back(v, false);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const double n = n1 + n2;
  double rank_sum_x = 0, tie_term = 0;  // tie_term: sum over tie groups of t^3 - t
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double tied = static_cast<double>(j - i);
    const double mean_rank = (static_cast<double>(i) + 1 + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (all[k].second) rank_sum_x += mean_rank;
    tie_term += tied * tied * tied - tied;
    i = j;
  }
  t.u = rank_sum_x - n1 * (n1 + 1) / 2.0;
  t.superiority = t.u / (n1 * n2);
  const double mean = n1 * n2 / 2.0;
  const double variance = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return t;  // every value equal: no evidence either way (z 0, p 1)
  // SciPy: z = (max(U, n1 n2 - U) - mean - 0.5) / sd; p = 2 P(Z > z), at most 1.
  const double u_big = std::max(t.u, n1 * n2 - t.u);
  t.z = (u_big - mean - 0.5) / std::sqrt(variance);
  t.p_value = std::min(1.0, 2.0 * normal_upper_tail(t.z));
  if (t.u < mean) t.z = -t.z;  // signed: positive when x tends to be larger
  return t;
}

}  // namespace convbench

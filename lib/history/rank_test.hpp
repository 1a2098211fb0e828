// The Mann-Whitney U test (Wilcoxon rank-sum) of two samples: does one tend to be larger than the
// other? It uses ranks, not values, so the heavy right tail of timing samples (a preempted
// iteration, a page fault) moves it by one rank, not by the size of the outlier.
#pragma once

#include <vector>

namespace convbench {

struct RankTest {
  double u = 0;        // U of the first sample: pairs (x, y) with x > y, plus half the ties
  double z = 0;        // standardised U, with the continuity correction
  double p_value = 1;  // two-sided
  // The probability that a value of the first sample exceeds one of the second (ties half):
  // U / (n1 n2), 0.5 when they are alike. A scale-free effect size.
  double superiority = 0.5;
};

// Two-sided, normal approximation with the tie correction of the variance and a continuity
// correction of 0.5, as SciPy's mannwhitneyu(x, y, alternative="two-sided", method="asymptotic",
// use_continuity=True). Either sample empty: p = 1.
RankTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// The standard normal's upper tail, P(Z > z).
double normal_upper_tail(double z);

}  // namespace convbench

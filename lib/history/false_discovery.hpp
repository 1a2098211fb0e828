// Benjamini-Hochberg: when one check tests hundreds of series, some p-values fall below any fixed
// level by chance alone. Adjusting them controls the expected share of false alarms among the
// series flagged (the false discovery rate) at the chosen level instead.
#pragma once

#include <vector>

namespace convbench {

// The BH-adjusted p-values (q-values), in the input's order, as SciPy's
// scipy.stats.false_discovery_control(p, method="bh"): p_(i) * m / i made monotone from the
// largest down and capped at 1. A test is a discovery at level q when its adjusted value <= q.
std::vector<double> benjamini_hochberg(const std::vector<double>& p_values);

}  // namespace convbench

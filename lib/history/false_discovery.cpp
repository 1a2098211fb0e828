#include "history/false_discovery.hpp"

#include <algorithm>
#include <numeric>

namespace convbench {

std::vector<double> benjamini_hochberg(const std::vector<double>& p_values) {
  const size_t m = p_values.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  std::vector<double> adjusted(m);
  double running = 1.0;
  for (size_t k = m; k-- > 0;) {  // from the largest p down, so the adjusted values are monotone
    const double scaled = p_values[order[k]] * static_cast<double>(m) / static_cast<double>(k + 1);
    running = std::min(running, scaled);
    adjusted[order[k]] = std::min(1.0, running);
  }
  return adjusted;
}

}  // namespace convbench

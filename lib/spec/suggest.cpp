#include "spec/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace convbench {

int edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  // Three rows are enough for the swap rule, which looks two rows back.
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (std::size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

std::optional<std::string> nearest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const int allowed = lower.size() <= 2 ? 0 : lower.size() <= 5 ? 1 : lower.size() <= 9 ? 2 : 3;
  std::optional<std::string> best;
  int best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    // Case differences alone ("Kernel") count as one edit, not one per letter.
    const int d = lower == candidate && word != candidate ? 1 : edit_distance(lower, candidate);
    if (d < best_distance && d <= std::max(allowed, lower == candidate ? 1 : 0)) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const auto match = nearest_match(word, candidates);
  return match ? " (did you mean \"" + *match + "\"?)" : "";
}

std::string join_alternatives(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

}  // namespace convbench

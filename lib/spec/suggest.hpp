// "Did you mean" suggestions for misspelled keys and names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convbench {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring characters each cost 1 ("kernal" -> "kernel" is 1, "ratoi" -> "ratio" is 1).
int edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is close enough to be a likely typo (the allowed
// distance grows with the word's length; words of one or two characters get no suggestion).
// Ties go to the earlier candidate.
std::optional<std::string> nearest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean "x"?)" or "" -- ready to append to a message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b or c"
std::string join_alternatives(const std::vector<std::string>& words);

}  // namespace convbench

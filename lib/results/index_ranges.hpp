// Sorted integers written as ranges, "0-3,7": how Slurm's --array, Linux CPU lists and merge's
// rows-per-source read, short enough for a person.
#pragma once

#include <string>
#include <vector>

namespace convbench {

template <class Int>
std::string index_ranges(const std::vector<Int>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(sorted[i]) + (j > i ? "-" + std::to_string(sorted[j]) : "");
    i = j + 1;
  }
  return out;
}

}  // namespace convbench

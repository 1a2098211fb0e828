// `convbench diff --calibrate A.json B.json`: an A/A comparison. Both files come from the same
// build on the same machine, so every difference between them is noise; its spread tells which
// --time-threshold keeps `diff` quiet on an unchanged build. Thresholds copied from elsewhere are
// wrong for a given machine: on a loaded 2-core VM an A/A run under the default 5% gave three
// "regressions".
#pragma once

#include <string>
#include <vector>

#include "report/regression_diff.hpp"

namespace convbench {

struct Calibration {
  DiffOptions current;               // the thresholds the false alarms are counted at
  int time_comparisons = 0;          // paired, timed phases of undisturbed rows
  int disturbed_rows = 0;            // left out: their spread is the machine's, not the noise's
  std::vector<double> time_changes;  // |new / base - 1| of each comparison, ascending
  double max_memory_change = 0;      // |new / base - 1| of peak memory, largest
  std::string widest;                // "block / variant, step time: +6.1%"
  int false_alarms = 0;              // verdicts other than SAME at the current thresholds
  double suggested_time_threshold = 0;
  double suggested_memory_threshold = 0;
};

// Throws InputError when no row pairs (as diff_results does).
Calibration calibrate(const ResultSet& a, const ResultSet& b, const DiffOptions& current, const std::string& a_name,
                      const std::string& b_name);
std::string format_calibration(const Calibration& c);

}  // namespace convbench

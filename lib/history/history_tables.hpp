// `history list` (one line per series) and `history show` (a table per series: the trend of the
// headline median with its quartiles, run by run, and the level changes the step fit finds).
#pragma once

#include <string>

#include "history/history_store.hpp"
#include "history/step_fit.hpp"

namespace convbench {

// Series whose label ("block [point] / variant") or device matches `filter` (RE2 syntax,
// spec/name_regex.hpp; empty: all). Throws InputError naming --filter for a bad expression.
std::vector<StoredSeries> select_series(HistoryReader& history, const std::string& filter);

std::string format_series_list(HistoryReader& history, const std::string& filter);
// `last` > 0: the last `last` runs of each series (the step fit still sees the whole series).
std::string format_series_trends(HistoryReader& history, const std::string& filter, int last,
                                 const StepFitOptions& step = {});

// The change points of a series' usable medians, as indexes into `measurements` where a new
// level starts (the trend report marks them too).
struct ChangePoint {
  size_t index = 0;              // into the measurements
  double before = 0, after = 0;  // the levels either side, ms
};
std::vector<ChangePoint> change_points(const std::vector<StoredMeasurement>& measurements,
                                       const StepFitOptions& step = {});

}  // namespace convbench

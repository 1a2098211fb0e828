// `history report --html FILE`: one self-contained page (inline CSS and SVG; no scripts, no
// external references), one section per device (backend, model and device key), one trend plot
// per series: the headline median run by run as a line, the quartiles as a band around it, the
// step fit's level changes marked with the levels either side, disturbed runs as hollow points
// (drawn, never fitted), the x axis the runs in order labelled with their commit and date.
#pragma once

#include <string>

#include "history/history_store.hpp"
#include "history/step_fit.hpp"

namespace convbench {

struct TrendSeries {
  std::string title;
  std::vector<StoredMeasurement> runs;
};

// One plot (an <svg> element with its namespace and style), a pure function of its data.
std::string render_trend_svg(const TrendSeries& series, const StepFitOptions& step = {});
// `filter` as history_tables.hpp's select_series.
std::string format_trend_report(HistoryReader& history, const std::string& filter, const StepFitOptions& step = {});

}  // namespace convbench

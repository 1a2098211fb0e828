// `convbench history site DIR`: the history as a static site a CI job can publish as plain files
// (no scripts, no external references): index.html lists every series by device with a sparkline
// of its medians, its latest run and its latest level change; series-<id>.html has the series'
// key, its trend plot (history/trend_report.hpp), its level changes and every run with its commit,
// host, quartiles, trust and peak; commit-<n>.html lists what was measured at one commit, with
// links to the commits before and after it (n counts commits in the order the history first saw
// them, so a hostile commit string never becomes a file name).
#pragma once

#include <string>
#include <vector>

#include "history/history_store.hpp"
#include "history/step_fit.hpp"

namespace convbench {

struct SiteFile {
  std::string name;  // a plain file name inside the site's folder
  std::string content;
};

// `filter` as history_tables.hpp's select_series.
std::vector<SiteFile> history_site(HistoryReader& history, const std::string& filter, const StepFitOptions& step = {});

}  // namespace convbench

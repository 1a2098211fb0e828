#include "report/diff_calibration.hpp"

#include <algorithm>
#include <cmath>

#include "results/sample_stats.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

// The margin over the widest A/A change: a sweep of hundreds of points will, on another day,
// see a change somewhat wider than the widest of one A/A pair of runs.
constexpr double kMargin = 1.5;

// Rounded up to a whole percent, at least 1%.
double round_up_percent(double x) { return std::max(0.01, std::ceil(x * 100.0 - 1e-9) / 100.0); }

std::string percent(double x) { return format_fixed(x * 100.0, 1) + "%"; }

}  // namespace

Calibration calibrate(const ResultSet& a, const ResultSet& b, const DiffOptions& current, const std::string& a_name,
                      const std::string& b_name) {
  DiffOptions judged = current;
  judged.allow_missing = true;     // an A/A pair has the same rows; missing ones are not noise
  judged.judge_disturbed = false;  // disturbed rows are counted apart
  const DiffReport report = diff_results(a, b, judged, a_name, b_name);
  Calibration c;
  c.current = current;
  double widest = -1;
  for (const RowDiff& r : report.rows) {
    bool disturbed = false;
    for (const MetricDiff& m : r.metrics) {
      if (m.note.find("disturbed in") != std::string::npos) disturbed = true;
      const bool time = m.metric.find("time") != std::string::npos;
      const bool memory = m.metric.rfind("peak memory", 0) == 0;
      if (memory) c.max_memory_change = std::max(c.max_memory_change, std::fabs(m.change));
      if (m.verdict != Verdict::same && m.verdict != Verdict::not_compared) ++c.false_alarms;
      if (!time || m.verdict == Verdict::not_compared) continue;
      ++c.time_comparisons;
      c.time_changes.push_back(std::fabs(m.change));
      if (std::fabs(m.change) > widest) {
        widest = std::fabs(m.change);
        c.widest = r.key.text() + ", " + m.metric + ": " + (m.change >= 0 ? "+" : "-") + percent(std::fabs(m.change));
      }
    }
    c.disturbed_rows += disturbed;
  }
  std::sort(c.time_changes.begin(), c.time_changes.end());
  c.suggested_time_threshold =
      c.time_changes.empty() ? current.time_threshold : round_up_percent(c.time_changes.back() * kMargin);
  c.suggested_memory_threshold =
      c.max_memory_change > 0 ? round_up_percent(c.max_memory_change * kMargin) : current.memory_threshold;
  return c;
}

std::string format_calibration(const Calibration& c) {
  std::string out = "convbench diff --calibrate: an A/A comparison (both files from the same build and machine)\n";
  if (c.time_changes.empty()) {
    out += "No timed phase of an undisturbed row pairs up";
    out += c.disturbed_rows > 0 ? " (" + std::to_string(c.disturbed_rows) + " disturbed rows left out)" : "";
    return out + ": nothing to calibrate from. Re-run both sides on an idle machine.\n";
  }
  const std::vector<double>& v = c.time_changes;
  out += std::to_string(c.time_comparisons) + " timed comparisons; |change| of the median: median " +
         percent(quantile(v, 0.5)) + ", 90th percentile " + percent(quantile(v, 0.9)) + ", largest " +
         percent(v.back()) + " (" + printable(c.widest) + ")\n";
  if (c.disturbed_rows > 0)
    out += std::to_string(c.disturbed_rows) + " disturbed rows left out (their spread is the machine's)\n";
  out += "peak memory: largest change " + percent(c.max_memory_change) + "\n";
  out += "At the thresholds given (time " + percent(c.current.time_threshold) + ", memory " +
         percent(c.current.memory_threshold) + "), diff would report " + std::to_string(c.false_alarms) +
         " change(s) between these two runs of one build: each a false alarm.\n";
  out += "Suggested: --time-threshold " + format_fixed(c.suggested_time_threshold, 2) + " --memory-threshold " +
         format_fixed(c.suggested_memory_threshold, 2) + " (the largest A/A change with a " + format_fixed(kMargin, 1) +
         "x margin, rounded up to a whole percent)\n";
  return out;
}

}  // namespace convbench

#include "history/history_tables.hpp"

#include <optional>

#include "spec/name_regex.hpp"
#include "util/input_error.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {

std::vector<StoredSeries> select_series(HistoryReader& history, const std::string& filter) {
  std::optional<NameRegex> re;
  if (!filter.empty()) re.emplace(filter, "--filter");
  std::vector<StoredSeries> out;
  for (StoredSeries& s : history.series())
    if (!re || re->search(s.key.label()) || re->search(s.key.device_label())) out.push_back(std::move(s));
  return out;
}

std::string format_series_list(HistoryReader& history, const std::string& filter) {
  TextTable t;
  t.header = {"id", "series", "dtype", "layout", "mode", "device", "graph", "runs", "first", "last"};
  t.right_aligned = {true, false, false, false, false, false, false, true, false, false};
  int64_t total = 0;
  const std::vector<StoredSeries> all = select_series(history, filter);
  for (const StoredSeries& s : all) {
    t.rows.push_back({std::to_string(s.id), printable(s.key.label()), s.key.dtype, s.key.layout, s.key.mode,
                      printable(s.key.device_label()),
                      s.key.graph_hash.substr(0, 12) + (s.key.graph_hash_source == "graph" ? "" : " (derived)"),
                      std::to_string(s.runs), s.first_date, s.last_date});
    total += s.runs;
  }
  return t.render_terminal() + "\n" + std::to_string(all.size()) + " series, " + std::to_string(total) +
         " measurements in " + printable(history.path()) + "\n";
}

std::vector<ChangePoint> change_points(const std::vector<StoredMeasurement>& measurements, const StepFitOptions& step) {
  std::vector<double> medians;
  std::vector<size_t> index;
  for (size_t i = 0; i < measurements.size(); ++i)
    if (measurements[i].usable()) {
      medians.push_back(*measurements[i].median);
      index.push_back(i);
    }
  const StepFit fit = fit_steps(medians, step);
  std::vector<ChangePoint> out;
  for (size_t k = 1; k < fit.segments.size(); ++k)
    out.push_back(
        {index[static_cast<size_t>(fit.segments[k].begin)], fit.segments[k - 1].level, fit.segments[k].level});
  return out;
}

std::string format_series_trends(HistoryReader& history, const std::string& filter, int last,
                                 const StepFitOptions& step) {
  std::string out;
  const std::vector<StoredSeries> all = select_series(history, filter);
  for (const StoredSeries& s : all) {
    const std::vector<StoredMeasurement> ms = history.measurements(s.id);
    const std::vector<ChangePoint> steps = change_points(ms, step);
    const size_t from = last > 0 && ms.size() > static_cast<size_t>(last) ? ms.size() - static_cast<size_t>(last) : 0;
    double first_median = 0;
    for (const StoredMeasurement& m : ms)
      if (m.usable()) {
        first_median = *m.median;
        break;
      }
    TextTable t;
    t.header = {"run", "date", "commit", "median ms", "q1 .. q3", "IQR", "vs first", "trust", "level change"};
    t.right_aligned = {true, false, false, true, true, true, true, false, false};
    for (size_t i = from; i < ms.size(); ++i) {
      const StoredMeasurement& m = ms[i];
      std::string change;
      for (const ChangePoint& c : steps)
        if (c.index == i)
          change = "<- step " + format_fixed(c.before, 3) + " -> " + format_fixed(c.after, 3) + " ms (" +
                   (c.after >= c.before ? "+" : "") + format_fixed((c.after / c.before - 1.0) * 100.0, 1) + "%)";
      const bool timed = m.median.has_value();
      t.rows.push_back(
          {"#" + std::to_string(m.run_id), m.date, printable(m.git_commit.substr(0, 12)),
           timed ? format_fixed(*m.median, 3) : m.status,
           timed && m.q1 && m.q3 ? format_fixed(*m.q1, 3) + " .. " + format_fixed(*m.q3, 3) : "-",
           timed && m.q1 && m.q3 && *m.median > 0 ? format_fixed((*m.q3 - *m.q1) / *m.median * 100.0, 1) + "%" : "-",
           timed && first_median > 0 ? ((*m.median >= first_median ? "+" : "") +
                                        format_fixed((*m.median / first_median - 1.0) * 100.0, 1) + "%")
                                     : "-",
           m.trust, change});
    }
    out += "#" + std::to_string(s.id) + " " + printable(s.key.label()) + " (" + s.key.dtype + ", " + s.key.layout +
           ", " + s.key.mode + ") on " + printable(s.key.device_label()) + ": " + std::to_string(ms.size()) + " runs" +
           (from > 0 ? ", the last " + std::to_string(ms.size() - from) + " shown" : "") + ", " +
           std::to_string(steps.size()) + " level change(s)\n";
    out += t.render_terminal() + "\n\n";
  }
  if (all.empty()) out = "no series" + (filter.empty() ? std::string() : " match --filter " + printable(filter)) + "\n";
  return out;
}

}  // namespace convbench

#include "history/history_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "history/false_discovery.hpp"
#include "history/rank_test.hpp"
#include "results/sample_stats.hpp"
#include "results/trust.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

std::string percent(double change) { return (change >= 0 ? "+" : "") + format_fixed(change * 100.0, 1) + "%"; }

std::string p_text(double p) {
  if (p <= 0) return "0";
  if (p >= 0.001) return format_fixed(p, 3);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", p);
  return buf;
}

// How the key of a new series differs from an existing one of the same block/variant/point.
std::string key_difference(const SeriesKey& a, const SeriesKey& b) {
  std::string d;
  auto add = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) d += (d.empty() ? "" : ", ") + std::string(what) + " " + y + " -> " + x;
  };
  add("graph", a.graph_hash.substr(0, 12), b.graph_hash.substr(0, 12));
  add("dtype", a.dtype, b.dtype);
  add("layout", a.layout, b.layout);
  add("mode", a.mode, b.mode);
  add("backend", a.backend, b.backend);
  add("device", a.device_model, b.device_model);
  if (a.device_key != b.device_key) {
    for (const auto& [k, v] : a.device_key.items())
      if (!b.device_key.contains(k) || b.device_key[k] != v)
        add(k.c_str(), v.is_string() ? v.get<std::string>() : v.dump(),
            b.device_key.contains(k)
                ? (b.device_key[k].is_string() ? b.device_key[k].get<std::string>() : b.device_key[k].dump())
                : "-");
  }
  return d;
}

void judge_memory(const ResultRow& row, const std::vector<StoredMeasurement>& all, double threshold, SeriesCheck& c) {
  const bool measured = has_measured_peak(row);
  c.new_peak = measured ? row.measured->peak_bytes : row.predicted.peak_bytes;
  const std::string source = measured ? "measured" : "predicted";
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->status == "ok" || it->status == "not measured")
      if (it->peak_source == source && it->peak_bytes > 0) {
        c.history_peak = it->peak_bytes;
        c.memory = memory_verdict(c.history_peak, c.new_peak, threshold);
        return;
      }
}

// The same workload on the same machine, but another graph: the block or variant was edited.
bool only_graph_differs(const SeriesKey& a, const SeriesKey& b) {
  SeriesKey x = a;
  x.graph_hash = b.graph_hash;
  x.graph_hash_source = b.graph_hash_source;
  // As unordered JSON: a key read back from the database has its device fields in another order.
  return nlohmann::json::parse(x.to_json().dump()) == nlohmann::json::parse(b.to_json().dump()) &&
         a.graph_hash != b.graph_hash;
}

// A new series whose block or variant was edited: the memory judged against the series of its
// previous graph (the one measured last), and the change said. Its time is another workload's.
void judge_across_graph_change(HistoryReader& history, const ResultRow& row, const std::vector<StoredSeries>& relatives,
                               const CheckOptions& o, SeriesCheck& c) {
  std::vector<StoredMeasurement> window;  // the window of the series measured last, as a series' own check reads it
  for (const StoredSeries& other : relatives) {
    if (!only_graph_differs(c.key, other.key)) continue;
    std::vector<StoredMeasurement> candidate = history.measurements(other.id, o.last);
    if (candidate.empty()) continue;
    if (window.empty() || candidate.back().run_id > window.back().run_id) {
      window = std::move(candidate);
      c.previous_graph_series = other.id;
    }
  }
  if (window.empty()) return;
  judge_memory(row, window, o.memory_threshold, c);
  const StoredMeasurement& before = window.back();
  std::string what;
  if (before.graph)
    what = graph_change_text(*before.graph, graph_facts(row));
  else
    what = "the history keeps no structure or counts of the earlier graph (added before they were kept)";
  c.graph_change = "the graph changed since series #" + std::to_string(c.previous_graph_series) + " (run #" +
                   std::to_string(before.run_id) + ")" + (what.empty() ? " (same structure and counts)" : ": " + what);
  c.note = "new series: " + c.graph_change + "; peak memory judged against that series, time not judged";
}

}  // namespace

int CheckReport::count_time(Verdict v) const {
  int n = 0;
  for (const SeriesCheck& s : series) n += s.time == v && !s.new_series;
  return n;
}

int CheckReport::count_memory(Verdict v) const {
  int n = 0;
  for (const SeriesCheck& s : series) n += s.memory == v;
  return n;
}

int CheckReport::unjudged() const {
  int n = 0;
  for (const SeriesCheck& s : series) n += s.new_series || s.time == Verdict::not_compared;
  return n;
}

int CheckReport::exit_code() const {
  for (const SeriesCheck& s : series)
    if (is_regression(s.time) || is_regression(s.memory)) return 1;
  for (const SeriesCheck& s : series)
    if (s.time == Verdict::ambiguous && s.change > 0) return 3;
  return unjudged() > 0 && !options.accept_unjudged ? 4 : 0;
}

CheckReport check_run(HistoryReader& history, const HistoryRun& run, const CheckOptions& o) {
  CheckReport report;
  report.db_path = history.path();
  report.results_name = run.source;
  report.options = o;
  std::vector<size_t> tested;  // indexes into report.series of the rank tests, for BH
  std::vector<double> p_values;
  for (const ResultRow& row : run.results.rows) {
    SeriesCheck c;
    c.key = series_key(row, run.results);
    const std::optional<StoredSeries> stored = history.find_series(c.key);
    if (!stored) {
      c.new_series = true;
      const std::vector<StoredSeries> relatives = history.relatives(c.key);
      for (const StoredSeries& other : relatives)
        c.relatives += (c.relatives.empty() ? "" : "; ") + std::string("differs from series #") +
                       std::to_string(other.id) + " in " + key_difference(c.key, other.key);
      c.note = "new series: no history yet" + (c.relatives.empty() ? "" : " (" + c.relatives + ")");
      judge_across_graph_change(history, row, relatives, o, c);
      c.explanation = c.note;
      report.series.push_back(std::move(c));
      continue;
    }
    const std::vector<StoredMeasurement> window = history.measurements(stored->id, o.last, run.run_sha256);
    judge_memory(row, window, o.memory_threshold, c);
    const bool ran = !row.device.empty() && row.status == RunStatus::ok;
    if (!ran) {
      const bool ran_before = !window.empty() && window.back().status == "ok";
      // A variant that could not be read failed as a run that failed does, in analyze files too.
      const bool analysis = row.device.empty() && counted(row.status);
      c.time = analysis ? Verdict::not_compared : ran_before ? Verdict::failed : Verdict::still_failing;
      c.memory = Verdict::not_compared;
      c.note = analysis ? "not measured (an analyze file)" : to_string(row.status) + ": " + row.message;
      c.explanation = c.note;
      report.series.push_back(std::move(c));
      continue;
    }
    const std::optional<TimeStats>& t = headline_time(row);
    if (!t || t->median <= 0) {
      c.note = "no headline time";
      c.explanation = c.note;
      report.series.push_back(std::move(c));
      continue;
    }
    c.new_median = t->median;
    std::vector<const StoredMeasurement*> usable;
    for (const StoredMeasurement& m : window)
      if (m.usable()) usable.push_back(&m);
    c.history_runs = static_cast<int>(usable.size());
    const TrustAssessment trust = assess_trust(row);
    if (trust.level == Trust::disturbed && !o.judge_disturbed) {
      std::string evidence;
      for (const std::string& e : trust.evidence) evidence += (evidence.empty() ? "" : ", ") + e;
      c.note = "the new run is disturbed (" + evidence + "): not judged";
      c.explanation = c.note;
      report.series.push_back(std::move(c));
      continue;
    }
    if (c.history_runs < o.min_runs) {
      c.note = std::to_string(c.history_runs) + " usable run(s) in the last " + std::to_string(o.last) +
               ", fewer than --min-runs " + std::to_string(o.min_runs) + ": not judged";
      c.explanation = c.note;
      report.series.push_back(std::move(c));
      continue;
    }
    std::vector<double> medians;
    for (const StoredMeasurement* m : usable) medians.push_back(*m->median);
    // The reference is the window's current level: the runs since the last level change the step
    // fit finds in the history, so that a change already judged (and kept) becomes the baseline
    // once two runs confirm it, instead of failing every later run until it leaves the window.
    const StepFit before = fit_steps(medians, o.step);
    const size_t from = static_cast<size_t>(before.segments.back().begin);
    std::vector<double> reference(medians.begin() + static_cast<std::ptrdiff_t>(from), medians.end()), pooled;
    for (size_t i = from; i < usable.size(); ++i) {
      // A run stored without raw samples (an old or foreign file) counts with its median alone.
      if (usable[i]->raw_ms.empty())
        pooled.push_back(*usable[i]->median);
      else
        pooled.insert(pooled.end(), usable[i]->raw_ms.begin(), usable[i]->raw_ms.end());
    }
    c.first_run = usable[from]->run_id;
    c.last_run = usable.back()->run_id;
    c.reference_runs = static_cast<int>(reference.size());
    c.history_samples = static_cast<int>(pooled.size());
    c.history_median = quantile(reference, 0.5);
    c.change = c.new_median / c.history_median - 1.0;
    // The run-to-run spread over the whole window (successive differences barely see its steps).
    c.spread = successive_difference_sd(medians) / quantile(medians, 0.5);
    c.threshold = std::max(o.time_threshold, o.spread_factor * c.spread);
    const std::vector<double>& fresh = t->raw_ms.empty() ? std::vector<double>{t->median} : t->raw_ms;
    const RankTest test = mann_whitney_u(fresh, pooled);
    c.p_value = test.p_value;
    c.superiority = test.superiority;
    c.tested = true;
    // A drift: small steps that no single run shows against its current level. The step fit over
    // the window and the new run puts the new run's level beyond the threshold from the window's
    // first level, and the history alone did not (so the drift is reported once, at the run that
    // completes it).
    auto drift = [&](const StepFit& fit) {
      return fit.segments.size() > 1 ? fit.segments.back().level / fit.segments.front().level - 1.0 : 0.0;
    };
    std::vector<double> with_new = medians;
    with_new.push_back(c.new_median);
    const StepFit after = fit_steps(with_new, o.step);
    const double drift_before = drift(before), drift_now = drift(after);
    // The new level must rest on history runs too: the new run alone (paired with the last run by
    // the shortest segment the fit allows) is the rank test's business, not a drift.
    const bool supported =
        after.segments.back().begin <= static_cast<int>(medians.size()) - std::max(1, o.step.min_segment);
    if (supported && std::fabs(drift_now) > c.threshold && std::fabs(drift_before) <= c.threshold) {
      c.step_change = drift_now;
      c.step = "step fit: the level moved " + percent(drift_now) + " (" +
               format_fixed(after.segments.front().level, 3) + " -> " + format_fixed(after.segments.back().level, 3) +
               " ms) in " + std::to_string(after.segments.size() - 1) + " step(s) since run #" +
               std::to_string(usable.front()->run_id);
    } else if (std::fabs(drift_before) > c.threshold) {
      c.note = "the level already moved " + percent(drift_before) + " at run #" + std::to_string(c.first_run) +
               "; judged against the runs since";
    }
    tested.push_back(report.series.size());
    p_values.push_back(c.p_value);
    report.series.push_back(std::move(c));
  }
  // Benjamini-Hochberg over every series tested in this run, then the verdicts.
  const std::vector<double> q = benjamini_hochberg(p_values);
  for (size_t i = 0; i < tested.size(); ++i) {
    SeriesCheck& c = report.series[tested[i]];
    c.q_value = q[i];
    const bool significant = c.q_value <= o.fdr;
    const bool beyond = std::fabs(c.change) > c.threshold;
    if (!beyond && c.step.empty())
      c.time = Verdict::same;
    else if ((beyond && significant) || !c.step.empty()) {
      const double direction = beyond ? c.change : c.step_change;
      c.time = direction > 0 ? Verdict::slower : Verdict::faster;
    } else
      c.time = Verdict::ambiguous;
    c.explanation = to_string(c.time) + ": median " + format_fixed(c.new_median, 3) + " ms vs " +
                    format_fixed(c.history_median, 3) + " ms of runs #" + std::to_string(c.first_run) + "..#" +
                    std::to_string(c.last_run) + " (" + std::to_string(c.reference_runs) + " runs, " +
                    std::to_string(c.history_samples) + " samples); Mann-Whitney p=" + p_text(c.p_value) +
                    ", BH q=" + p_text(c.q_value) + (significant ? " <= " : " > ") + p_text(o.fdr) + "; effect " +
                    percent(c.change) + " (P(new>old)=" + format_fixed(c.superiority, 2) + ") " +
                    (beyond ? "> " : "<= ") + "threshold " + format_fixed(c.threshold * 100.0, 1) + "%" +
                    (c.step.empty() ? "" : "; " + c.step) + (c.note.empty() ? "" : "; " + c.note);
  }
  return report;
}

std::string format_check(const CheckReport& r) {
  TextTable t;
  t.header = {"series", "runs", "history ms", "new ms", "change", "p", "q", "time", "memory"};
  t.right_aligned = {false, true, true, true, true, true, true, false, false};
  for (const SeriesCheck& c : r.series) {
    const bool judged = c.tested;
    t.rows.push_back({c.key.label() + " (" + c.key.dtype + ", " + c.key.layout + ", " + c.key.mode + ")",
                      std::to_string(c.history_runs), judged ? format_fixed(c.history_median, 3) : "-",
                      c.new_median > 0 ? format_fixed(c.new_median, 3) : "-", judged ? percent(c.change) : "-",
                      judged ? p_text(c.p_value) : "-", judged ? p_text(c.q_value) : "-",
                      c.new_series ? "NEW SERIES" : to_string(c.time), to_string(c.memory)});
  }
  std::string out = "convbench history check: " + printable(r.results_name) + " against " + printable(r.db_path) +
                    " (last " + std::to_string(r.options.last) + " runs per series, FDR " + p_text(r.options.fdr) +
                    ", time threshold " + format_fixed(r.options.time_threshold * 100, 1) + "%, memory threshold " +
                    format_fixed(r.options.memory_threshold * 100, 1) + "%)\n\n";
  out += t.render_terminal() + "\n";
  for (const SeriesCheck& c : r.series) {
    if (c.time == Verdict::same && c.memory != Verdict::more && c.memory != Verdict::less) continue;
    std::string line = c.key.label() + ": " + c.explanation;
    if (c.memory == Verdict::more || c.memory == Verdict::less)
      line += "; peak memory " + format_bytes(c.history_peak) + " -> " + format_bytes(c.new_peak) + " (" +
              to_string(c.memory) + ")";
    out += printable(line) + "\n";
  }
  const int regressions = r.count_time(Verdict::slower) + r.count_memory(Verdict::more) + r.count_time(Verdict::failed);
  int new_series = 0, not_judged = 0;
  for (const SeriesCheck& c : r.series) {
    new_series += c.new_series;
    not_judged += !c.new_series && c.time == Verdict::not_compared;
  }
  out += "\ntime: " + std::to_string(r.count_time(Verdict::slower)) + " slower, " +
         std::to_string(r.count_time(Verdict::faster)) + " faster, " +
         std::to_string(r.count_time(Verdict::ambiguous)) + " ambiguous, " +
         std::to_string(r.count_time(Verdict::same)) + " same, " + std::to_string(not_judged) + " not judged, " +
         std::to_string(new_series) + " new series; memory: " + std::to_string(r.count_memory(Verdict::more)) +
         " more, " + std::to_string(r.count_memory(Verdict::less)) + " less; " +
         std::to_string(r.count_time(Verdict::failed)) + " failed. ";
  switch (r.exit_code()) {
    case 1: out += "Result: " + std::to_string(regressions) + " regression(s) (exit code 1).\n"; break;
    case 3:
      out +=
          "Result: ambiguous (exit code 3): a slowdown beyond the threshold that the samples cannot confirm; "
          "re-run with more samples (--min-samples 30 --min-time 2) on an idle machine.\n";
      break;
    case 4:
      out += "Result: not judged (exit code 4): nothing regressed among what was judged, but " +
             std::to_string(r.unjudged()) +
             " row(s) could not be judged (new series, too few runs, disturbed or untimed: see above); "
             "--accept-unjudged accepts them (exit 0).\n";
      break;
    default:
      out += "Result: no regression (exit code 0)." +
             (r.unjudged() > 0
                  ? " " + std::to_string(r.unjudged()) + " row(s) could not be judged: accepted by --accept-unjudged."
                  : std::string()) +
             "\n";
  }
  return out;
}

}  // namespace convbench

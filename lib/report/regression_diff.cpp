#include "report/regression_diff.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "report/run_warnings.hpp"
#include "results/graph_facts.hpp"
#include "results/trust.hpp"
#include "util/input_error.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

// "[a, b]": the blocks of a results file in row order, each once.
std::string block_list(const ResultSet& results) {
  std::vector<std::string> blocks;
  for (const ResultRow& r : results.rows)
    if (std::find(blocks.begin(), blocks.end(), r.block) == blocks.end()) blocks.push_back(r.block);
  std::string out = "[";
  for (size_t i = 0; i < blocks.size(); ++i) out += (i ? ", " : "") + printable(blocks[i]);
  return out + "]";
}

std::string percent(double change) { return (change >= 0 ? "+" : "") + format_fixed(change * 100.0, 1) + "%"; }

std::string time_text(const TimeStats& t) {
  return format_fixed(t.median, 3) + " ms [" + format_fixed(t.q1, 3) + ", " + format_fixed(t.q3, 3) + "]";
}

// A field the user left out of --pair-by may differ between paired rows; by default none may.
bool may_differ(const DiffOptions& o, const char* field) {
  return o.pair_by != default_pairing_fields() &&
         std::find(o.pair_by.begin(), o.pair_by.end(), field) == o.pair_by.end();
}

// The workload must be the same for a comparison to mean anything, except in the fields the
// user chose not to pair by (--pair-by): those are the comparison. Shapes are logical (N, C,
// spatial...) in every layout, so a layout change alone is not a new shape.
std::string workload_difference(const ResultRow& a, const ResultRow& b, const DiffOptions& o) {
  std::string d;
  auto add = [&](const std::string& what) { d += (d.empty() ? "" : ", ") + what; };
  if (!may_differ(o, "point") && a.input_shape != b.input_shape) add("input shape");
  if (!may_differ(o, "dtype") && a.dtype != b.dtype) add("dtype");
  if (!may_differ(o, "layout") && layout_text(a) != layout_text(b)) add("layout");
  if (!may_differ(o, "mode") && a.mode != b.mode) add("mode");
  return d;
}

// What differs by the user's choice (fields left out of --pair-by), said on the row.
std::string paired_across(const ResultRow& a, const ResultRow& b) {
  std::string d;
  auto add = [&](const char* f, const std::string& x, const std::string& y) {
    if (x != y) d += (d.empty() ? "" : ", ") + std::string(f) + " " + x + " -> " + y;
  };
  add("point", a.point_label, b.point_label);
  add("dtype", a.dtype, b.dtype);
  add("layout", layout_text(a), layout_text(b));
  add("mode", a.mode, b.mode);
  return d;
}

void diff_times(const ResultRow& base, const ResultRow& next, double threshold, RowDiff& out) {
  const std::pair<std::string, std::pair<const std::optional<TimeStats>*, const std::optional<TimeStats>*>> phases[] = {
      {"forward time", {&base.forward, &next.forward}},
      {"backward time", {&base.backward, &next.backward}},
      {"step time", {&base.step, &next.step}},
      {std::string(is_training(base) ? "step" : "forward") + " time (graph)", {&base.graph, &next.graph}}};
  for (const auto& [name, pair] : phases) {
    const auto& [b, n] = pair;
    if (!*b && !*n) continue;
    MetricDiff m;
    m.metric = name;
    m.base_text = *b ? time_text(**b) : "-";
    m.new_text = *n ? time_text(**n) : "-";
    if (!*b || !*n || (*b)->median <= 0) {
      m.note = !*b ? "not timed in base" : !*n ? "not timed in new" : "base median is zero";
    } else {
      m.change = (*n)->median / (*b)->median - 1.0;
      m.verdict = time_verdict(**b, **n, threshold);
      if (m.verdict == Verdict::ambiguous) m.note = "quartiles overlap";
    }
    out.metrics.push_back(std::move(m));
  }
  // A verdict on a row whose clock fell while it was timed may be throttling, not the change.
  std::string clocks;
  for (const auto& [side, row] : {std::pair{"base", &base}, std::pair{"new", &next}})
    if (row->clock && clock_dropped(*row->clock))
      clocks += std::string(clocks.empty() ? "" : "; ") + side + ": " + clock_change_text(*row->clock);
  if (clocks.empty()) return;
  for (MetricDiff& m : out.metrics)
    if (m.verdict == Verdict::slower || m.verdict == Verdict::faster || m.verdict == Verdict::ambiguous)
      m.note += (m.note.empty() ? "" : "; ") + std::string("clock fell while timing (") + clocks + ")";
}

void diff_memory(const ResultRow& base, const ResultRow& next, double threshold, RowDiff& out) {
  const bool measured = has_measured_peak(base) && has_measured_peak(next);
  const int64_t b = measured ? base.measured->peak_bytes : base.predicted.peak_bytes;
  const int64_t n = measured ? next.measured->peak_bytes : next.predicted.peak_bytes;
  MetricDiff m;
  m.metric = std::string("peak memory (") + (measured ? "measured" : "predicted") + ")";
  m.base_text = format_bytes(b);
  m.new_text = format_bytes(n);
  if (b <= 0 && n <= 0) return;  // neither file knows the memory
  m.change = b > 0 ? static_cast<double>(n) / static_cast<double>(b) - 1.0 : 0.0;
  m.verdict = memory_verdict(b, n, threshold);
  out.metrics.push_back(std::move(m));
}

RowDiff diff_row(const ResultRow& base, const ResultRow& next, const DiffOptions& options) {
  RowDiff d;
  d.key = key_of(base, options.pair_by);
  if (options.pair_by != default_pairing_fields())
    if (const std::string across = paired_across(base, next); !across.empty())
      d.metrics.push_back({"paired across", "", "", 0, Verdict::not_compared, across});
  // An edit of the block, not a row paired across a layout or dtype (which says so itself).
  if (!base.graph_hash.empty() && !next.graph_hash.empty() && base.graph_hash != next.graph_hash &&
      workload_difference(base, next, DiffOptions{}).empty()) {
    const std::string what = graph_change_text(graph_facts(base), graph_facts(next));
    d.graph_change = "the graph changed" + (what.empty() ? " (same structure and counts)" : ": " + what);
  }
  const std::string changed = workload_difference(base, next, options);
  if (!changed.empty()) {
    d.metrics.push_back({"workload", "", "", 0, Verdict::not_compared,
                         "differs (" + changed + "): not compared (--pair-by can leave a field out)"});
    return d;
  }
  const bool base_ran = base.device.empty() || base.status == RunStatus::ok;
  const bool new_ran = next.device.empty() || next.status == RunStatus::ok;
  if (!base_ran || !new_ran) {
    MetricDiff m{"status",
                 base.device.empty() ? "-" : to_string(base.status),
                 next.device.empty() ? "-" : to_string(next.status),
                 0,
                 Verdict::still_failing,
                 ""};
    if (base_ran)
      m.verdict = Verdict::failed;
    else if (new_ran)
      m.verdict = Verdict::fixed;
    m.note = new_ran ? base.message : next.message;
    d.metrics.push_back(std::move(m));
    return d;  // a row that did not run has no times or measured memory to compare
  }
  diff_times(base, next, options.time_threshold, d);
  // A disturbed row's times measure the machine, not the change: report them, judge nothing.
  std::string sides;
  for (const auto& [side, row] : {std::pair{"base", &base}, std::pair{"new", &next}})
    if (const TrustAssessment t = assess_trust(*row); t.level == Trust::disturbed) {
      sides += std::string(sides.empty() ? "" : " and ") + side;
      d.disturbed += std::string(d.disturbed.empty() ? "" : "; ") + side + ": ";
      for (size_t i = 0; i < t.evidence.size(); ++i) d.disturbed += (i ? ", " : "") + t.evidence[i];
    }
  if (!sides.empty())
    for (MetricDiff& m : d.metrics) {
      if (options.judge_disturbed) {
        m.note += (m.note.empty() ? "" : "; ") + std::string("disturbed in ") + sides;
      } else if (m.verdict != Verdict::not_compared) {
        m.verdict = Verdict::not_compared;
        m.note = "disturbed in " + sides + ": not judged";
      }
    }
  diff_memory(base, next, options.memory_threshold, d);
  return d;
}

}  // namespace

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::same: return "SAME";
    case Verdict::slower: return "SLOWER";
    case Verdict::faster: return "FASTER";
    case Verdict::ambiguous: return "AMBIGUOUS";
    case Verdict::more: return "MORE";
    case Verdict::less: return "LESS";
    case Verdict::failed: return "FAILED";
    case Verdict::fixed: return "FIXED";
    case Verdict::still_failing: return "STILL FAILING";
    case Verdict::not_compared: return "-";
  }
  return "?";
}

bool is_regression(Verdict v) { return v == Verdict::slower || v == Verdict::more || v == Verdict::failed; }

Verdict time_verdict(const TimeStats& base, const TimeStats& next, double threshold) {
  const double change = next.median / base.median - 1.0;
  // A change exactly at the threshold is the same; the epsilon absorbs rounding (10.5 / 10 - 1 > 0.05).
  if (std::fabs(change) <= threshold + 1e-12) return Verdict::same;
  if (change > 0) return next.q1 > base.q3 ? Verdict::slower : Verdict::ambiguous;
  return next.q3 < base.q1 ? Verdict::faster : Verdict::ambiguous;
}

Verdict memory_verdict(int64_t base, int64_t next, double threshold) {
  const double b = static_cast<double>(base), n = static_cast<double>(next);
  if (n > b * (1.0 + threshold)) return Verdict::more;
  if (n < b * (1.0 - threshold)) return Verdict::less;
  return Verdict::same;
}

int DiffReport::count(Verdict v) const {
  int n = 0;
  for (const RowDiff& r : rows)
    for (const MetricDiff& m : r.metrics) n += m.verdict == v;
  return n;
}

bool DiffReport::has_regression() const {
  for (const RowDiff& r : rows)
    for (const MetricDiff& m : r.metrics)
      if (is_regression(m.verdict)) return true;
  return false;
}

int DiffReport::not_judged() const {
  int n = 0;
  for (const RowDiff& r : rows)
    for (const MetricDiff& m : r.metrics)
      n += m.verdict == Verdict::not_compared && m.note.rfind("disturbed in", 0) == 0;
  return n;
}

int DiffReport::unjudged() const {
  int n = 0;
  for (const RowDiff& r : rows)
    for (const MetricDiff& m : r.metrics)
      n += m.verdict == Verdict::not_compared && m.metric != "paired across" && !m.note.empty();
  return n;
}

int DiffReport::ambiguous_slower() const {
  int n = 0;
  for (const RowDiff& r : rows)
    for (const MetricDiff& m : r.metrics) n += m.verdict == Verdict::ambiguous && m.change > 0;
  return n;
}

int DiffReport::exit_code() const {
  if (has_regression()) return 1;
  if (ambiguous_slower() > 0) return 3;
  return unjudged() > 0 && !options.accept_unjudged ? 4 : 0;
}

DiffReport diff_results(const ResultSet& base, const ResultSet& next, const DiffOptions& options,
                        const std::string& base_name, const std::string& new_name) {
  DiffReport report;
  report.base_name = base_name;
  report.new_name = new_name;
  report.base_engine = base.engine;
  report.new_engine = next.engine;
  report.base_device = base.device;
  report.new_device = next.device;
  report.options = options;
  RowPairing pairing;
  try {
    pairing = pair_rows_by_fields(base, next, options.pair_by);
  } catch (const std::invalid_argument& e) {
    throw InputError({"command line", 0, 0}, "--pair-by", e.what());
  }
  std::string by;
  for (const std::string& f : options.pair_by) by += (by.empty() ? "" : ", ") + f;
  if (pairing.pairs.empty() && !(base.rows.empty() && next.rows.empty()))
    throw InputError({new_name, 0, 0}, "results",
                     "no row pairs with a row of " + base_name + " (rows pair by " + by +
                         "; --pair-by chooses): " + base_name + " has blocks " + block_list(base) + ", " + new_name +
                         " has blocks " + block_list(next) + "; nothing would be compared");
  for (const RowPair& p : pairing.pairs) report.rows.push_back(diff_row(*p.left, *p.right, options));
  // A row that disappeared is a failure unless the caller says rows may go (a renamed block,
  // a dropped sweep point): otherwise a rename would pass a CI gate without being measured.
  if (!options.allow_missing)
    for (const RowKey& k : pairing.only_in_left) {
      RowDiff missing;
      missing.key = k;
      missing.metrics = {
          {"status", "present", "missing", 0, Verdict::failed, "missing from new (--allow-missing accepts this)"}};
      report.rows.push_back(std::move(missing));
    }
  report.only_in_base = std::move(pairing.only_in_left);
  report.only_in_new = std::move(pairing.only_in_right);
  return report;
}

namespace {

// The verdict line and, for ambiguous results, what to do about them.
std::string verdict_text(const DiffReport& report) {
  const int regressions = report.count(Verdict::slower) + report.count(Verdict::more) + report.count(Verdict::failed);
  const int ambiguous = report.count(Verdict::ambiguous);
  switch (report.exit_code()) {
    case 1:
      return "Result: " + std::to_string(regressions) + (regressions == 1 ? " regression" : " regressions") +
             " (exit code 1).";
    case 3:
      return "Result: ambiguous (exit code 3): " + std::to_string(report.ambiguous_slower()) +
             " change(s) in the slower direction are larger than the threshold but within the noise of the "
             "samples. Re-run both sides with more samples, e.g. `convbench compare SPEC --min-samples 30 "
             "--min-time 2`, on an otherwise idle machine.";
    case 4: {
      std::string text = "Result: not judged (exit code 4): nothing regressed among what was judged, but " +
                         std::to_string(report.unjudged()) + " comparison(s) could not be judged (see above)";
      if (report.not_judged() > 0)
        text += "; " + std::to_string(report.not_judged()) +
                " because a run was disturbed: re-run that side on a quiet machine, or pass --judge-disturbed";
      return text + ". --accept-unjudged accepts them (exit 0).";
    }
    default: {
      std::string text = "Result: no regression (exit code 0).";
      if (ambiguous > 0)
        text += " " + std::to_string(ambiguous) +
                " ambiguous speed-up(s) do not count: an improvement never fails the check.";
      if (report.unjudged() > 0)
        text += " " + std::to_string(report.unjudged()) + " comparison(s) could not be judged (see above)" +
                (report.not_judged() > 0 ? ", " + std::to_string(report.not_judged()) +
                                               " because a run was disturbed (re-run that side on a quiet machine, "
                                               "or pass --judge-disturbed)"
                                         : std::string()) +
                ": accepted by --accept-unjudged.";
      return text;
    }
  }
}

std::string counts_text(const DiffReport& report) {
  return std::to_string(report.count(Verdict::slower)) + " slower, " + std::to_string(report.count(Verdict::faster)) +
         " faster, " + std::to_string(report.count(Verdict::ambiguous)) + " ambiguous, " +
         std::to_string(report.count(Verdict::same)) + " same, " + std::to_string(report.not_judged()) +
         " not judged; memory: " + std::to_string(report.count(Verdict::more)) + " more, " +
         std::to_string(report.count(Verdict::less)) + " less; " + std::to_string(report.count(Verdict::failed)) +
         " failed.";
}

// The table of the metrics `keep` selects.
TextTable diff_table(const DiffReport& report, bool md, const std::function<bool(const MetricDiff&)>& keep) {
  TextTable t;
  t.header = {"block / variant", "metric", "base", "new", "change", "verdict", "note"};
  t.right_aligned = {false, false, true, true, true, false, false};
  for (const RowDiff& r : report.rows)
    for (const MetricDiff& m : r.metrics) {
      if (!keep(m)) continue;
      // A time left unjudged still shows how far it moved.
      const bool has_change = m.metric != "status" && m.metric != "workload" &&
                              (m.verdict != Verdict::not_compared || m.note.rfind("disturbed in", 0) == 0);
      t.rows.push_back({r.key.text(), m.metric, m.base_text, m.new_text, has_change ? percent(m.change) : "",
                        md && is_regression(m.verdict) ? "**" + to_string(m.verdict) + "**" : to_string(m.verdict),
                        m.note});
    }
  return t;
}

bool unchanged(const MetricDiff& m) {
  return m.verdict == Verdict::same || (m.verdict == Verdict::not_compared && m.note.empty());
}

}  // namespace

std::string format_diff(const DiffReport& report, TableStyle style) {
  const bool md = style == TableStyle::markdown;
  std::string out;
  const std::string header = report.base_name + " (" + report.base_engine +
                             (report.base_device.empty() ? "" : ", " + report.base_device) + ") -> " + report.new_name +
                             " (" + report.new_engine + (report.new_device.empty() ? "" : ", " + report.new_device) +
                             "); thresholds: time " + format_fixed(report.options.time_threshold * 100.0, 1) + "% " +
                             report.time_rule + ", memory " + format_fixed(report.options.memory_threshold * 100.0, 1) +
                             "%";
  const std::string device_warning = report.base_device == report.new_device
                                         ? ""
                                         : "warning: the files were measured on different devices (" +
                                               printable(report.base_device.empty() ? "none" : report.base_device) +
                                               " vs " +
                                               printable(report.new_device.empty() ? "none" : report.new_device) + ")";
  std::string only;
  const bool list_base = report.options.allow_missing;  // otherwise they are FAILED rows above
  for (const auto& [label, keys] : {std::pair{"only in base", list_base ? &report.only_in_base : nullptr},
                                    std::pair{"only in new", &report.only_in_new}})
    if (keys)
      for (const RowKey& k : *keys)
        only +=
            std::string(md ? "- " : "") + label + ": " + (md ? markdown_escape(k.text()) : printable(k.text())) + "\n";
  // The evidence once per disturbed row, not in every metric's note; what changed in a graph.
  for (const RowDiff& r : report.rows)
    for (const std::string& line : {r.disturbed.empty() ? "" : r.key.text() + " was disturbed: " + r.disturbed,
                                    r.graph_change.empty() ? "" : r.key.text() + ": " + r.graph_change})
      if (!line.empty()) only += std::string(md ? "- " : "") + (md ? markdown_escape(line) : printable(line)) + "\n";

  if (md) {
    // A pull-request comment: the verdict first, what changed next, the rest folded away.
    out += "## convbench diff: " + verdict_text(report) + "\n\n" + counts_text(report) + "\n\n" +
           markdown_escape(header) + "\n\n";
    if (!device_warning.empty()) out += "**" + device_warning + "**\n\n";
    const TextTable changed = diff_table(report, true, [](const MetricDiff& m) { return !unchanged(m); });
    if (!changed.rows.empty()) out += changed.render_markdown() + "\n";
    if (!only.empty()) out += only + "\n";
    const TextTable same = diff_table(report, true, unchanged);
    if (!same.rows.empty())
      out += "<details><summary>" + std::to_string(same.rows.size()) + " unchanged</summary>\n\n" +
             same.render_markdown() + "\n</details>\n";
    return out;
  }
  out += "convbench diff: " + printable(header) + "\n";
  if (!device_warning.empty()) out += device_warning + "\n";
  const TextTable all = diff_table(report, false, [](const MetricDiff&) { return true; });
  if (!all.rows.empty()) out += "\n" + all.render_terminal() + "\n";
  if (!only.empty()) out += only + "\n";
  return out + counts_text(report) + " " + verdict_text(report) + "\n";
}

}  // namespace convbench

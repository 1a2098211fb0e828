#include "report/interleaved_verdict.hpp"

#include <algorithm>
#include <cmath>

#include "results/row_pairing.hpp"
#include "results/sample_stats.hpp"
#include "results/trust.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

const ResultRow* row_in_round(const ResultSet& set, const RowKey& key, const std::vector<std::string>& fields) {
  for (const ResultRow& r : set.rows)
    if (key_of(r, fields) == key) return &r;
  return nullptr;
}

// The headline time judged over the rounds (see the header).
MetricDiff interleaved_time(const std::vector<ResultSet>& base_rounds, const std::vector<ResultSet>& new_rounds,
                            const RowKey& key, const DiffOptions& o) {
  MetricDiff m;
  std::vector<double> ratios, base_ms, new_ms;
  int disturbed = 0;
  bool training = true;
  for (size_t r = 0; r < base_rounds.size() && r < new_rounds.size(); ++r) {
    const ResultRow* b = row_in_round(base_rounds[r], key, o.pair_by);
    const ResultRow* n = row_in_round(new_rounds[r], key, o.pair_by);
    if (!b || !n || !ran(*b) || !ran(*n) || b->device.empty() || n->device.empty()) continue;
    training = is_training(*b);
    const std::optional<TimeStats>& bt = headline_time(*b);
    const std::optional<TimeStats>& nt = headline_time(*n);
    // The fastest sample of each side: another process's work only ever adds time, so the minimum
    // is the estimate a burst disturbs least (a round's median moves with every burst in it).
    if (!bt || !nt || bt->min <= 0 || nt->min <= 0) continue;
    ratios.push_back(nt->min / bt->min);
    base_ms.push_back(bt->min);
    new_ms.push_back(nt->min);
    disturbed += assess_trust(*b).level == Trust::disturbed || assess_trust(*n).level == Trust::disturbed;
  }
  const int rounds = static_cast<int>(std::min(base_rounds.size(), new_rounds.size()));
  m.metric = std::string(training ? "step" : "forward") + " time, " + std::to_string(rounds) + " rounds interleaved";
  if (ratios.size() < 2) {
    m.note = "timed on both sides in " + std::to_string(ratios.size()) + " round(s), fewer than 2: not judged";
    return m;
  }
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  const double g = std::exp(log_sum / static_cast<double>(ratios.size()));
  m.base_text = format_fixed(quantile(base_ms, 0.5), 3) + " ms min";
  m.new_text = format_fixed(quantile(new_ms, 0.5), 3) + " ms min";
  m.change = g - 1;
  const bool all_slower = std::all_of(ratios.begin(), ratios.end(), [](double r) { return r > 1; });
  const bool all_faster = std::all_of(ratios.begin(), ratios.end(), [](double r) { return r < 1; });
  if (std::fabs(g - 1) <= o.time_threshold)
    m.verdict = Verdict::same;
  else if (g > 1 && all_slower)
    m.verdict = Verdict::slower;
  else if (g < 1 && all_faster)
    m.verdict = Verdict::faster;
  else
    m.verdict = Verdict::ambiguous;
  std::string listed;
  for (double r : ratios) listed += (listed.empty() ? "" : " ") + format_fixed(r, 3);
  m.note = "new/base per round: " + listed;
  if (m.verdict == Verdict::ambiguous) m.note += " (the rounds disagree on the direction)";
  if (disturbed > 0)
    m.note += "; " + std::to_string(disturbed) + " of " + std::to_string(ratios.size()) +
              " round(s) disturbed, both sides side by side in each";
  return m;
}

// forward, backward, step time and the graph replay's: judged over the rounds instead.
bool is_time_metric(const MetricDiff& m) { return m.metric.find(" time") != std::string::npos; }

}  // namespace

DiffReport interleaved_report(const std::vector<ResultSet>& base_rounds, const std::vector<ResultSet>& new_rounds,
                              const DiffOptions& options, const std::string& base_name, const std::string& new_name) {
  // Status, memory, missing rows and graph changes as diff judges them, on the first round; the
  // per-round times are replaced by the interleaved verdict below.
  DiffOptions first = options;
  first.judge_disturbed = true;
  DiffReport report = diff_results(base_rounds.front(), new_rounds.front(), first, base_name, new_name);
  report.options = options;
  report.time_rule = "over " + std::to_string(std::min(base_rounds.size(), new_rounds.size())) +
                     " interleaved rounds that agree on the direction";
  for (RowDiff& d : report.rows) {
    const bool ran_both = std::none_of(d.metrics.begin(), d.metrics.end(), [](const MetricDiff& m) {
      return m.metric == "status" || m.metric == "workload";
    });
    std::erase_if(d.metrics, is_time_metric);
    d.disturbed.clear();  // said per round in the time's note
    if (ran_both) d.metrics.insert(d.metrics.begin(), interleaved_time(base_rounds, new_rounds, d.key, options));
  }
  return report;
}

}  // namespace convbench

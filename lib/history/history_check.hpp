// `convbench history check RESULTS.json`: each row of a new run judged against the recent history
// of its series, with diff's verdicts and exit codes (report/regression_diff.hpp).
//
// The change rule, for the headline time (the step in train mode, forward in infer mode):
//   history   the last `last` runs of the series that ran, were timed and were not disturbed
//             (disturbed runs never decide); fewer than `min_runs`: not judged.
//   reference the current level: the runs of the window since the last level change that a
//             penalised step fit (history/step_fit.hpp) of their medians finds (all of them when
//             it finds none), so a change that was kept becomes the baseline once two runs
//             confirm it, instead of failing every later run.
//   test      Mann-Whitney U of the new run's raw samples against the pooled raw samples of the
//             reference runs (two-sided), its p-values adjusted by Benjamini-Hochberg over every
//             series this check tests, so that the false alarms among hundreds of series stay at `fdr`.
//   effect    the new median against the median of the reference runs' medians; it counts when it
//             exceeds max(time_threshold, 3 x the run-to-run spread of the window's medians), so a
//             difference that is real but smaller than run-to-run noise does not fail CI.
//   drift     the step fit over the window and the new run: when the new run's level is beyond the
//             same threshold from the window's first level, and the history alone was not, small
//             steps that no single run shows have added up: a change, reported at that run.
//   verdict   SAME within the threshold; SLOWER / FASTER beyond it when the test is significant
//             (q <= fdr) or the drift rule fired; AMBIGUOUS beyond it otherwise.
// Peak memory (deterministic): the new peak against the last run's, MORE / LESS beyond
// `memory_threshold`. A row that fails where the series last ran: FAILED.
// A new series whose key differs from an existing series only in the graph (the block or variant
// was edited): its peak memory is judged against that series' last run, as above, and the change
// is said (results/graph_facts.hpp: structure, parameters, MACs, bytes); its time, another
// workload's, is not judged.
// Exit code: 1 for any SLOWER, MORE or FAILED; else 3 for an AMBIGUOUS slowdown; else 4 when a
// row could not be judged (a new series among them), unless accept_unjudged; else 0; bad input 2.
#pragma once

#include <string>
#include <vector>

#include "history/history_store.hpp"
#include "history/step_fit.hpp"
#include "report/regression_diff.hpp"

namespace convbench {

struct CheckOptions {
  int last = 30;
  int min_runs = 5;
  double fdr = 0.01;
  double time_threshold = 0.05;
  double memory_threshold = 0.01;
  double spread_factor = 3.0;
  bool judge_disturbed = false;
  bool accept_unjudged = false;  // exit 0, not 4, when a row could not be judged
  StepFitOptions step;
};

struct SeriesCheck {
  SeriesKey key;
  bool new_series = false;
  std::string relatives;  // for a new series: how it differs from series of the same block/variant/point
  // For a new series that differs from one only in its graph: that series, and what changed.
  int64_t previous_graph_series = 0;
  std::string graph_change;
  int history_runs = 0;    // usable runs in the window
  int reference_runs = 0;  // of them, the runs since the last level change: what the new run is tested against
  int history_samples = 0;
  int64_t first_run = 0, last_run = 0;  // the window's run ids
  double new_median = 0, history_median = 0;
  double change = 0;     // new / history - 1
  double threshold = 0;  // the effect the change had to exceed
  double spread = 0;     // run-to-run spread of the history's medians, relative
  double p_value = 1, q_value = 1, superiority = 0.5;
  bool tested = false;     // a rank test was made (and counted in the BH adjustment)
  std::string step;        // the step fit's finding, when it found a level change beyond the threshold
  double step_change = 0;  // that level change, relative
  Verdict time = Verdict::not_compared;
  Verdict memory = Verdict::not_compared;
  int64_t new_peak = 0, history_peak = 0;
  std::string note;         // why not judged, or what else to know
  std::string explanation;  // the one line that says why this verdict
};

struct CheckReport {
  std::string db_path, results_name;
  CheckOptions options;
  std::vector<SeriesCheck> series;
  int count_time(Verdict v) const;    // time verdicts v
  int count_memory(Verdict v) const;  // memory verdicts v
  // Rows whose time was not judged: a new series (no history to judge against), too few runs, a
  // disturbed or untimed row. Failures are counted as failures, not here.
  int unjudged() const;
  int exit_code() const;  // 0, 1, 3 or 4, as diff's (4: something not judged, unless accept_unjudged)
};

CheckReport check_run(HistoryReader& history, const HistoryRun& run, const CheckOptions& options);
std::string format_check(const CheckReport& report);

}  // namespace convbench

// `convbench diff BASE NEW`: direction-aware regression verdicts between two results files.
//
// Rows pair by (block, variant, point_label). Per pair and metric:
//   time (forward, backward, step, and the graph replay when both files have one; medians and
//   quartiles of the samples):
//     SLOWER     new median > base median * (1 + t) and the quartile intervals separate (new q1 > base q3)
//     FASTER     new median < base median * (1 - t) and new q3 < base q1
//     SAME       |new / base - 1| <= t
//     AMBIGUOUS  beyond t, but the intervals overlap: the noise cannot tell
//   peak memory (measured peak when both rows have one, else predicted; deterministic):
//     MORE / LESS beyond the memory threshold m, else SAME
//   status: FAILED when the row ran in base and not in new, or is missing from new (a renamed
//     block or variant must not pass silently; --allow-missing lists such rows instead).
//   trust (results/trust.hpp): a row that is `disturbed` in either file gets no time verdict
//     (its times say more about the machine than the change), only a note with the evidence;
//     DiffOptions::judge_disturbed judges it anyway. Memory is judged regardless: it is counted
//     and measured by the allocator, not timed.
// Exit code: 1 when anything is SLOWER, MORE or FAILED; else 3 when a change in the slower
// direction is AMBIGUOUS; else 4 when a comparison could not be judged (a disturbed side, a
// time only one side has, rows of different workloads), unless DiffOptions::accept_unjudged;
// else 0. FASTER, LESS and an ambiguous speed-up never fail (a CI step
// `convbench diff a b || exit 1` must not fail on an improvement), and a gate never passes on
// comparisons nobody made. Rows only in new are listed.
// Two files with no row in common are an input error (exit 2): nothing would be compared.
// A time verdict on a row whose clock fell while it was timed says so in its note. A row whose
// graph changed between the files is still judged (same block, variant and workload) and says
// what changed: structure, parameters, MACs, saved and predicted bytes.
#pragma once

#include <string>
#include <vector>

#include "report/summary_tables.hpp"
#include "results/results.hpp"
#include "results/row_pairing.hpp"

namespace convbench {

enum class Verdict { same, slower, faster, ambiguous, more, less, failed, fixed, still_failing, not_compared };
std::string to_string(Verdict v);  // "SLOWER", "AMBIGUOUS", ...
bool is_regression(Verdict v);     // slower, more, failed

struct DiffOptions {
  double time_threshold = 0.05;
  double memory_threshold = 0.01;
  bool allow_missing = false;    // rows of base missing from new are listed, not FAILED
  bool judge_disturbed = false;  // give time verdicts to rows flagged disturbed
  bool accept_unjudged = false;  // exit 0, not 4, when comparisons could not be judged
  // The fields rows pair by (results/row_pairing.hpp); a field left out may differ between the
  // paired rows (e.g. layout: channels-first against channels-last) and the row says so.
  std::vector<std::string> pair_by = default_pairing_fields();
};

Verdict time_verdict(const TimeStats& base, const TimeStats& next, double threshold);
Verdict memory_verdict(int64_t base, int64_t next, double threshold);

struct MetricDiff {
  std::string metric;  // forward | backward | step | peak memory (measured | predicted) | status
  std::string base_text, new_text;
  double change = 0;  // new / base - 1 (0 for status)
  Verdict verdict = Verdict::not_compared;
  std::string note;
};

struct RowDiff {
  RowKey key;
  std::vector<MetricDiff> metrics;
  // Why the row's times were not judged (or, with judge_disturbed, why to doubt them): "new: a
  // runnable task waited for a CPU 98% of the time, ..." per disturbed side; empty otherwise.
  std::string disturbed;
  // When the two rows' graphs differ (a block edited between the runs): what changed, in
  // structure and counts (results/graph_facts.hpp); empty when the graphs are the same or a file
  // does not say.
  std::string graph_change;
};

struct DiffReport {
  std::string base_name, new_name;  // file names as given
  std::string base_engine, new_engine, base_device, new_device;
  DiffOptions options;
  // What a time change must also show to count, for the header: diff's quartiles; the rounds'
  // agreement for an interleaved run (report/interleaved_verdict.hpp).
  std::string time_rule = "with separated quartiles";
  std::vector<RowDiff> rows;
  std::vector<RowKey> only_in_base, only_in_new;

  int count(Verdict v) const;
  int not_judged() const;  // time metrics left unjudged because a side was disturbed
  // Every comparison left unjudged: those, a time only one side has, a workload that differs.
  int unjudged() const;
  int ambiguous_slower() const;  // AMBIGUOUS verdicts whose median moved in the slower direction
  bool has_regression() const;
  int exit_code() const;  // 0, 1, 3 or 4 (see above)
};

// Throws InputError (exit 2) when no row of `next` pairs with a row of `base`, naming the blocks
// of each file.
DiffReport diff_results(const ResultSet& base, const ResultSet& next, const DiffOptions& options,
                        const std::string& base_name = "base", const std::string& new_name = "new");

// A table (one line per row x metric), the rows found in one file only, a summary line with the
// exit code's meaning, and advice when results are ambiguous. Markdown, for a pull-request
// comment, puts the verdict first and folds the unchanged rows into a <details> block.
std::string format_diff(const DiffReport& report, TableStyle style);

}  // namespace convbench

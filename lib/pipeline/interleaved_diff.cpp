#include "pipeline/interleaved_diff.hpp"

#include <algorithm>
#include <sstream>

#include "measure/progress.hpp"
#include "pipeline/analyze.hpp"
#include "report/result_columns.hpp"
#include "results/row_pairing.hpp"
#include "util/markup_escape.hpp"

namespace convbench {

InterleavedRuns measure_interleaved(const Spec& base, const Spec& next, const InterleavedOptions& o,
                                    std::ostream& notices) {
  const ResultSet base_rows = analyze_spec(base);  // validates everything before any run
  const ResultSet new_rows = analyze_spec(next);
  const RowPairing pairing = pair_rows_by_key(base_rows, new_rows);
  struct Pair {
    size_t base, next;
  };
  std::vector<Pair> pairs;
  for (const RowPair& p : pairing.pairs)
    pairs.push_back(
        {static_cast<size_t>(p.left - base_rows.rows.data()), static_cast<size_t>(p.right - new_rows.rows.data())});

  InterleavedRuns runs;
  runs.base.assign(static_cast<size_t>(o.rounds), base_rows);
  runs.next.assign(static_cast<size_t>(o.rounds), new_rows);
  Progress progress(2 * static_cast<int>(pairs.size()) * o.rounds, o.compare.quiet);
  int started = 0;
  bool noticed = false;
  // One row of one side, measured by compare itself (its device choice, AMP rules and failures).
  auto measure = [&](bool base_side, size_t index, int round) {
    const Spec& spec = base_side ? base : next;
    ResultSet& into = base_side ? runs.base[static_cast<size_t>(round)] : runs.next[static_cast<size_t>(round)];
    CompareOptions one = o.compare;
    one.quiet = true;
    one.run_row = [index](size_t i) { return i == index; };
    const ResultRow& row = into.rows[index];
    const std::string label = printable(key_of(row).text() + " (" + (base_side ? "base" : "new") + ", round " +
                                        std::to_string(round + 1) + ")");
    const int item = started++;
    progress.start(item, label);
    std::ostringstream quiet;
    ResultSet measured = compare(spec, one, noticed ? quiet : notices);
    noticed = true;
    into.engine = measured.engine;
    into.device = measured.device;
    into.provenance = measured.provenance;
    if (!measured.rows.empty()) into.rows[index] = std::move(measured.rows.front());
    progress.finish(item, label,
                    to_string(into.rows[index].status) + (ran(into.rows[index]) ? trust_suffix(into.rows[index]) : ""));
  };
  for (int round = 0; round < o.rounds; ++round) {
    const bool forward = round % 2 == 0;  // spec order, base first; then reversed, new first
    for (size_t k = 0; k < pairs.size(); ++k) {
      const Pair& p = pairs[forward ? k : pairs.size() - 1 - k];
      measure(forward, forward ? p.base : p.next, round);
      measure(!forward, forward ? p.next : p.base, round);
    }
  }
  return runs;
}

}  // namespace convbench

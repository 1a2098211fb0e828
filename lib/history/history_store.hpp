// The results history on disk (history_schema.hpp's tables): adding runs, reading series.
//
// On either store (history_db.hpp): writers open the database read-write with a busy timeout
// and add all runs of one command in one write transaction, taken at once (a second writer waits
// for the first instead of failing): every run, series and measurement, or none of them (an
// error or a kill leaves the database as it was). Readers open it read-only and never create,
// migrate or write it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.hpp"
#include "history/series_key.hpp"
#include "results/graph_facts.hpp"
#include "results/results.hpp"

namespace convbench {

inline constexpr int kHistoryBusyTimeoutMs = 30000;

// One results document to add: its rows, where it came from, and its identity.
struct HistoryRun {
  std::string source;      // the file as given, or "compare --db"
  std::string run_sha256;  // of the parsed document's canonical dump: the same run read twice is the same
  ResultSet results;
};

// Reads and checks a results file (InputError, exit 2, for anything that is not a convbench
// results file of this schema).
HistoryRun history_run_from_file(const std::string& path);
HistoryRun history_run_from_results(const ResultSet& results, const std::string& source);

struct AddSummary {
  int runs_added = 0, measurements = 0, new_series = 0;
  std::vector<std::string> skipped;  // "FILE: already in the history (run #12)"
};

// Adds every run in one transaction (see above). Throws HistoryDbError (exit 2) with the path
// and SQLite's message; the database is then unchanged.
AddSummary add_runs(const std::string& db_path, const std::vector<HistoryRun>& runs,
                    int busy_timeout_ms = kHistoryBusyTimeoutMs);

// Before a long measurement that will be added (compare --db): refuses now, as add_runs would
// later, a file that is not a convbench history, is corrupt or comes from a newer convbench.
// Writes nothing; a missing file is fine (add_runs creates it).
void check_history_addable(const std::string& db_path, int busy_timeout_ms = kHistoryBusyTimeoutMs);

// `history integrity`: SQLite's integrity_check over the whole file (every page, every index
// against its table), read only. Problems empty: intact, and the counts are the history's.
struct IntegrityReport {
  std::vector<std::string> problems;  // at most 100, as SQLite words them
  int64_t runs = 0, series = 0, measurements = 0;
};
IntegrityReport check_history_integrity(const std::string& db_path, int busy_timeout_ms = kHistoryBusyTimeoutMs);

struct StoredSeries {
  int64_t id = 0;
  SeriesKey key;
  int64_t runs = 0;
  std::string first_date, last_date;
};

struct StoredMeasurement {
  int64_t run_id = 0;
  std::string date, git_commit, host, source;
  std::string status, trust, trust_evidence, phase;
  std::optional<double> median, q1, q3;
  std::vector<double> raw_ms;  // the headline phase's samples
  int64_t peak_bytes = 0;
  std::string peak_source;
  std::optional<GraphFacts> graph;  // absent in histories written before they were kept (schema 2)
  // Usable to judge a change: it ran, was timed, and was not disturbed.
  bool usable() const { return status == "ok" && median && trust != "disturbed"; }
};

class HistoryReader {
 public:
  // Throws HistoryDbError when the file is missing, not a current convbench history, locked or
  // corrupt.
  explicit HistoryReader(const std::string& db_path, int busy_timeout_ms = kHistoryBusyTimeoutMs);
  ~HistoryReader();

  const std::string& path() const;
  std::vector<StoredSeries> series();  // ordered by device, block, point, variant
  // These two leave runs and dates empty (a lookup, not a listing).
  std::optional<StoredSeries> find_series(const SeriesKey& key);
  // Series of the same block, variant and point under other keys (another device, graph, ...).
  std::vector<StoredSeries> relatives(const SeriesKey& key);
  // The series' measurements in run order; `last` > 0: only the last `last` of them. A run whose
  // run_sha256 is `exclude_run` is left out (a check of a run already added).
  std::vector<StoredMeasurement> measurements(int64_t series_id, int last = 0, const std::string& exclude_run = "");
  std::optional<int64_t> run_id(const std::string& run_sha256);

 private:
  std::unique_ptr<HistoryDb> db_;
  int64_t version_ = 0;  // the schema version read (kHistoryOldestReadableVersion or newer)
};

}  // namespace convbench

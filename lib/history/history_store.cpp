#include "history/history_store.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "history/history_db.hpp"
#include "history/history_file.hpp"
#include "history/history_schema.hpp"
#include "results/json_reader.hpp"
#include "results/json_results.hpp"
#include "results/trust.hpp"
#include "util/input_file.hpp"
#include "util/json_text.hpp"
#include "util/sha256.hpp"
#include "util/utf8.hpp"

namespace convbench {
namespace {

using nlohmann::json;

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string provenance_text(const ResultSet& r, const char* key, const std::string& fallback) {
  const json& p = r.provenance;
  if (!p.is_object() || !p.contains(key)) return fallback;
  return p[key].is_string() ? p[key].get<std::string>() : p[key].dump();
}

// The measured peak when the row has one, else the predicted one (as diff chooses).
std::pair<int64_t, std::string> peak_of(const ResultRow& r) {
  if (has_measured_peak(r)) return {r.measured->peak_bytes, "measured"};
  return {r.predicted.peak_bytes, "predicted"};
}

json raw_samples_json(const ResultRow& r) {
  json raw = json::object();
  if (r.forward) raw["forward"] = r.forward->raw_ms;
  if (r.backward) raw["backward"] = r.backward->raw_ms;
  if (r.step) raw["step"] = r.step->raw_ms;
  if (r.graph) raw["graph"] = r.graph->raw_ms;
  return raw;
}

void bind_optional_json(Statement& s, int index, const std::optional<json>& j) {
  if (j)
    s.bind(index, j->dump());
  else
    s.bind_null(index);
}

}  // namespace

HistoryRun history_run_from_file(const std::string& path) {
  const InputText in = read_input_file(path, "results file", kMaxResultsBytes);
  const json doc = parse_json_input(in, "results file");
  HistoryRun run;
  run.results = results_from_json(doc, in.name);
  run.source = escape_invalid_utf8(in.name);  // a path may hold any bytes: stored as text
  // The parsed document's dump, not the bytes: the same run written with other indentation (or
  // added straight from compare --db) is the same run.
  run.run_sha256 = sha256_hex(doc.dump());
  if (run.results.rows.empty()) throw InputError({in.name, 0, 0}, "results", "no rows: nothing to add");
  // A history's runs are whole runs of a spec: one cut short by a signal would read as series
  // that stopped being measured, and a rerun of it as a second run of the rows that did finish.
  if (const auto interrupted = interruption_of(run.results))
    throw InputError({in.name, 0, 0}, "provenance.interrupted",
                     "the run was " + interruption_text(*interrupted) +
                         ": a history keeps whole runs; run the spec again to completion and add that");
  return run;
}

HistoryRun history_run_from_results(const ResultSet& results, const std::string& source) {
  HistoryRun run;
  run.results = results;
  run.source = source;
  // What `--json` would write, parsed back: the same identity as `history add` of that file.
  run.run_sha256 = sha256_hex(json_text(json::parse(json_text(results_to_json(results)))));
  return run;
}

void check_history_addable(const std::string& db_path, int busy_timeout_ms) {
  if (!is_history_server(db_path)) {
    check_history_file(db_path);  // a FIFO or a dangling link is refused even where nothing exists yet
    std::error_code ec;
    if (!std::filesystem::exists(history_file_path(db_path), ec)) return;
  }
  // A server's database must exist and be reachable now: the run is not lost to a typo in the URI.
  const std::unique_ptr<HistoryDb> db = open_history_db(db_path, HistoryAccess::read_only, busy_timeout_ms);
  history_schema_version(*db);
}

IntegrityReport check_history_integrity(const std::string& db_path, int busy_timeout_ms) {
  const std::unique_ptr<HistoryDb> db = open_history_db(db_path, HistoryAccess::read_only, busy_timeout_ms);
  IntegrityReport report;
  report.problems = db->damage(true);
  if (report.problems.empty() && history_schema_version(*db) > 0) {
    report.runs = db->query_integer("SELECT count(*) FROM runs");
    report.series = db->query_integer("SELECT count(*) FROM series");
    report.measurements = db->query_integer("SELECT count(*) FROM measurements");
  }
  return report;
}

AddSummary add_runs(const std::string& db_path, const std::vector<HistoryRun>& runs, int busy_timeout_ms) {
  AddSummary summary;
  const std::unique_ptr<HistoryDb> owned = open_history_db(db_path, HistoryAccess::read_write_create, busy_timeout_ms);
  HistoryDb& db = *owned;
  history_schema_version(db);  // a newer, foreign or corrupt file is refused before anything is written
  db.prepare_for_writing();
  Transaction tx(db);
  migrate_history(db);
  Statement find_run(db, "SELECT id FROM runs WHERE run_sha256 = ?1");
  Statement insert_run(db,
                       "INSERT INTO runs (run_sha256, source, added_at, date, git_commit, host, engine, backend, "
                       "provenance) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id");
  Statement insert_series(db,
                          "INSERT INTO series (key_sha256, block, variant, point, graph_hash, "
                          "graph_hash_source, dtype, layout, mode, backend, device_model, device_key, key_json) "
                          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id");
  Statement find_series(db, "SELECT id FROM series WHERE key_sha256 = ?1");
  Statement insert_measurement(
      db,
      "INSERT INTO measurements (run_id, series_id, status, trust, trust_evidence, phase, median_ms, q1_ms, q3_ms, "
      "samples, raw_ms, peak_bytes, peak_source, clock, host_activity) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  Statement insert_graph_facts(db, "INSERT INTO graph_facts (run_id, series_id, facts) VALUES (?1, ?2, ?3)");
  const std::string now = utc_now();
  std::map<std::string, bool> seen_in_this_add;
  for (const HistoryRun& run : runs) {
    find_run.bind(1, run.run_sha256);
    const bool present = find_run.step();
    const int64_t existing = present ? find_run.integer(0) : 0;
    find_run.reset();
    if (present || seen_in_this_add.count(run.run_sha256)) {
      summary.skipped.push_back(run.source + ": already in the history" +
                                (present ? " (run #" + std::to_string(existing) + ")" : " (given twice)"));
      continue;
    }
    seen_in_this_add[run.run_sha256] = true;
    const ResultSet& r = run.results;
    insert_run.bind(1, run.run_sha256)
        .bind(2, run.source)
        .bind(3, now)
        .bind(4, provenance_text(r, "date", now))
        .bind(5, provenance_text(r, "git_commit", "unknown"))
        .bind(6, provenance_text(r, "host_name", "unknown"))
        .bind(7, r.engine)
        .bind(8, run_backend(r))
        .bind(9, json_text(r.provenance));
    if (!insert_run.step()) db.fail("the run just added has no id");
    const int64_t run_id = insert_run.integer(0);
    insert_run.reset();
    ++summary.runs_added;
    const json row_json = results_to_json(r)["results"];
    std::set<int64_t> series_in_run;
    for (const ResultRow& row : r.rows) {
      const SeriesKey key = series_key(row, r);
      const std::string key_sha = key.sha256();
      // Looked up before it is inserted: an insert that conflicts would still use up an id on a
      // server (PostgreSQL's sequences do not roll back), and both stores number series alike.
      int64_t series_id = 0;
      find_series.bind(1, key_sha);
      const bool known = find_series.step();
      if (known) series_id = find_series.integer(0);
      find_series.reset();
      if (!known) {
        insert_series.bind(1, key_sha)
            .bind(2, key.block)
            .bind(3, key.variant)
            .bind(4, key.point)
            .bind(5, key.graph_hash)
            .bind(6, key.graph_hash_source)
            .bind(7, key.dtype)
            .bind(8, key.layout)
            .bind(9, key.mode)
            .bind(10, key.backend)
            .bind(11, key.device_model)
            .bind(12, json_text(key.device_key))
            .bind(13, json_text(key.to_json()));
        if (!insert_series.step()) db.fail("the series of " + key.label() + " has no id");
        series_id = insert_series.integer(0);
        insert_series.reset();
        ++summary.new_series;
      }

      const TrustAssessment trust = assess_trust(row);
      const std::optional<TimeStats>& t = headline_time(row);
      const bool timed = t && !row.device.empty() && row.status == RunStatus::ok;
      const auto [peak, peak_source] = peak_of(row);
      insert_measurement.bind(1, run_id)
          .bind(2, series_id)
          .bind(3, row.device.empty() ? std::string("not measured") : to_string(row.status))
          .bind(4, to_string(trust.level))
          .bind(5, json(trust.evidence).dump())
          .bind(6, std::string(is_training(row) ? "step" : "forward"));
      if (timed) {
        insert_measurement.bind(7, t->median)
            .bind(8, t->q1)
            .bind(9, t->q3)
            .bind(10, static_cast<int64_t>(t->samples()));
      } else {
        insert_measurement.bind_null(7).bind_null(8).bind_null(9).bind(10, int64_t{0});
      }
      insert_measurement.bind(11, raw_samples_json(row).dump()).bind(12, peak).bind(13, peak_source);
      // The clock and interference evidence as the results JSON spells them.
      const json& written = row_json[static_cast<size_t>(&row - r.rows.data())];
      bind_optional_json(insert_measurement, 14,
                         written.contains("clock") ? std::optional<json>(written["clock"]) : std::nullopt);
      bind_optional_json(
          insert_measurement, 15,
          written.contains("host_activity") ? std::optional<json>(written["host_activity"]) : std::nullopt);
      if (!series_in_run.insert(series_id).second)
        throw InputError({run.source, 0, 0}, "results",
                         "two rows of the same series (" + key.label() + "): a results file has one row per series");
      insert_measurement.run();
      insert_graph_facts.bind(1, run_id).bind(2, series_id).bind(3, to_json(graph_facts(row)).dump()).run();
      summary.measurements += 1;
    }
  }
  tx.commit();
  return summary;
}

}  // namespace convbench

namespace convbench {
namespace {

SeriesKey key_from_json(const std::string& text, const std::string& db, int64_t series_id) try {
  const json j = json::parse(text);
  SeriesKey k;
  k.block = j.value("block", "");
  k.variant = j.value("variant", "");
  k.point = j.value("point", "");
  k.graph_hash = j.value("graph_hash", "");
  k.graph_hash_source = j.value("graph_hash_source", "");
  k.dtype = j.value("dtype", "");
  k.layout = j.value("layout", "");
  k.mode = j.value("mode", "");
  k.backend = j.value("backend", "");
  k.device_model = j.value("device_model", "");
  if (j.contains("device_key")) k.device_key = nlohmann::ordered_json::parse(j["device_key"].dump());
  return k;
} catch (const json::exception& e) {
  // convbench writes key_json; anything else there was changed outside it.
  throw HistoryDbError("history database " + db + ": series #" + std::to_string(series_id) +
                       ": key_json is not a series key (" + e.what() +
                       "); the file was changed outside convbench: restore it from a backup");
}

constexpr const char* kSeriesColumns =
    "SELECT s.id, s.key_json, (SELECT count(*) FROM measurements m WHERE m.series_id = s.id), "
    "(SELECT min(r.date) FROM measurements m JOIN runs r ON r.id = m.run_id WHERE m.series_id = s.id), "
    "(SELECT max(r.date) FROM measurements m JOIN runs r ON r.id = m.run_id WHERE m.series_id = s.id) FROM series s ";

// The key alone, for lookups that do not show counts (check looks up every row of a run: counting
// 10,000 runs per series there would cost more than the check itself).
constexpr const char* kSeriesKeyColumns = "SELECT s.id, s.key_json FROM series s ";

StoredSeries series_from(const Statement& s, const std::string& db, bool with_counts = true) {
  const SeriesKey key = key_from_json(s.text(1), db, s.integer(0));
  if (!with_counts) return {s.integer(0), key, 0, "", ""};
  return {s.integer(0), key, s.integer(2), s.text(3), s.text(4)};
}

}  // namespace

HistoryReader::HistoryReader(const std::string& db_path, int busy_timeout_ms)
    : db_(open_history_db(db_path, HistoryAccess::read_only, busy_timeout_ms)) {
  version_ = check_history_readable(*db_);
}

HistoryReader::~HistoryReader() = default;

const std::string& HistoryReader::path() const { return db_->path(); }

std::vector<StoredSeries> HistoryReader::series() {
  Statement s(*db_, std::string(kSeriesColumns) +
                        "ORDER BY s.backend, s.device_model, s.device_key, s.block, s.point, "
                        "s.variant, s.dtype, s.layout, s.mode, s.id");
  std::vector<StoredSeries> out;
  while (s.step()) out.push_back(series_from(s, db_->path()));
  return out;
}

std::optional<StoredSeries> HistoryReader::find_series(const SeriesKey& key) {
  Statement s(*db_, std::string(kSeriesKeyColumns) + "WHERE s.key_sha256 = ?1");
  s.bind(1, key.sha256());
  if (!s.step()) return std::nullopt;
  return series_from(s, db_->path(), false);
}

std::vector<StoredSeries> HistoryReader::relatives(const SeriesKey& key) {
  Statement s(*db_, std::string(kSeriesKeyColumns) +
                        "WHERE s.block = ?1 AND s.variant = ?2 AND s.point = ?3 AND s.key_sha256 != ?4 ORDER BY s.id");
  s.bind(1, key.block).bind(2, key.variant).bind(3, key.point).bind(4, key.sha256());
  std::vector<StoredSeries> out;
  while (s.step()) out.push_back(series_from(s, db_->path(), false));
  return out;
}

std::vector<StoredMeasurement> HistoryReader::measurements(int64_t series_id, int last,
                                                           const std::string& exclude_run) {
  // Runs are in the order they were added (CI adds them as commits land): the newest `last` by
  // the index on (series_id, run_id), then oldest first.
  Statement s(*db_, std::string("SELECT * FROM (SELECT m.run_id, r.date, r.git_commit, r.host, r.source, m.status, "
                                "m.trust, m.trust_evidence, m.phase, m.median_ms, m.q1_ms, m.q3_ms, m.raw_ms, "
                                "m.peak_bytes, m.peak_source, " +
                                std::string(version_ >= 3 ? "g.facts" : "NULL") +
                                " FROM measurements m JOIN runs r ON r.id = m.run_id " +
                                std::string(version_ >= 3 ? "LEFT JOIN graph_facts g ON g.run_id = m.run_id AND "
                                                            "g.series_id = m.series_id "
                                                          : "") +
                                "WHERE m.series_id = ?1 AND r.run_sha256 != ?2 ORDER BY m.run_id DESC") +
                        (last > 0 ? " LIMIT ?3" : "") + ") AS newest ORDER BY run_id");
  s.bind(1, series_id).bind(2, exclude_run);
  if (last > 0) s.bind(3, static_cast<int64_t>(last));
  std::vector<StoredMeasurement> out;
  while (s.step()) {
    StoredMeasurement m;
    m.run_id = s.integer(0);
    m.date = s.text(1);
    m.git_commit = s.text(2);
    m.host = s.text(3);
    m.source = s.text(4);
    m.status = s.text(5);
    m.trust = s.text(6);
    m.trust_evidence = s.text(7);
    m.phase = s.text(8);
    if (!s.is_null(9)) m.median = s.number(9);
    if (!s.is_null(10)) m.q1 = s.number(10);
    if (!s.is_null(11)) m.q3 = s.number(11);
    const json raw = json::parse(s.text(12), nullptr, false);
    if (raw.is_object() && raw.contains(m.phase) && raw[m.phase].is_array())
      for (const json& v : raw[m.phase])
        if (v.is_number()) m.raw_ms.push_back(v.get<double>());
    m.peak_bytes = s.integer(13);
    m.peak_source = s.text(14);
    if (!s.is_null(15)) m.graph = graph_facts_from_json(json::parse(s.text(15), nullptr, false));
    out.push_back(std::move(m));
  }
  return out;
}

std::optional<int64_t> HistoryReader::run_id(const std::string& run_sha256) {
  Statement s(*db_, "SELECT id FROM runs WHERE run_sha256 = ?1");
  s.bind(1, run_sha256);
  if (!s.step()) return std::nullopt;
  return s.integer(0);
}

}  // namespace convbench

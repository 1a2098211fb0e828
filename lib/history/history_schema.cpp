#include "history/history_schema.hpp"

namespace convbench {

const std::vector<std::string>& history_migrations() {
  // Never edit a migration that has shipped: add the next one. Comments inside the SQL are kept
  // by SQLite, so `sqlite3 DB .schema` shows what each column holds.
  static const std::vector<std::string> migrations = {
      // 0 -> 1: runs, series, measurements.
      R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  run_sha256 TEXT NOT NULL UNIQUE,  -- SHA-256 of the results document: adding a run twice is refused
  source TEXT NOT NULL,             -- the results file as given to `history add` (or "compare --db")
  added_at TEXT NOT NULL,           -- UTC, when it was added
  date TEXT NOT NULL,               -- UTC, when it was measured (provenance.date)
  git_commit TEXT NOT NULL,         -- convbench's commit (provenance.git_commit)
  host TEXT NOT NULL,               -- provenance.host_name
  engine TEXT NOT NULL,             -- "convbench 0.1.0"
  backend TEXT NOT NULL,            -- cpu | cuda | reference
  provenance TEXT NOT NULL          -- the whole provenance object (JSON)
);
CREATE TABLE series (
  id INTEGER PRIMARY KEY,
  key_sha256 TEXT NOT NULL UNIQUE,  -- SHA-256 of key_json: what makes two rows the same series
  block TEXT NOT NULL,
  variant TEXT NOT NULL,
  point TEXT NOT NULL,              -- the sweep point's label ("" when not swept)
  graph_hash TEXT NOT NULL,         -- the resolved op graph's SHA-256 (or one derived from shapes and counts)
  graph_hash_source TEXT NOT NULL,  -- "graph" | "derived from shapes and counts" (files without graph_hash)
  dtype TEXT NOT NULL,
  layout TEXT NOT NULL,
  mode TEXT NOT NULL,               -- train | infer
  backend TEXT NOT NULL,
  device_model TEXT NOT NULL,       -- the GPU's name (cuda) or the CPU's model name
  device_key TEXT NOT NULL,         -- versions and speed settings of the device (JSON; see lib/history/README.md)
  key_json TEXT NOT NULL            -- every field above, as hashed
);
CREATE TABLE measurements (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  series_id INTEGER NOT NULL REFERENCES series(id),
  status TEXT NOT NULL,             -- ok | unsupported | failed | ... (results JSON "status")
  trust TEXT NOT NULL,              -- ok | noisy | disturbed (results/trust), judged when added
  trust_evidence TEXT NOT NULL,     -- JSON list of the reasons
  phase TEXT NOT NULL,              -- the headline phase: step (train) or forward (infer)
  median_ms REAL,                   -- of the headline phase; NULL when not timed
  q1_ms REAL,
  q3_ms REAL,
  samples INTEGER NOT NULL,         -- headline samples
  raw_ms TEXT NOT NULL,             -- JSON: {"forward": [...], "backward": [...], "step": [...]}
  peak_bytes INTEGER NOT NULL,      -- measured peak, else predicted
  peak_source TEXT NOT NULL,        -- measured | predicted
  clock TEXT,                       -- JSON {domain, before_mhz, after_mhz, limits_after}, NULL when not read
  host_activity TEXT,               -- JSON interference evidence (results JSON "host_activity")
  PRIMARY KEY (run_id, series_id)
) WITHOUT ROWID;
CREATE INDEX measurements_by_series ON measurements(series_id, run_id);
)sql",
      // 1 -> 2: a view for people reading the history with the sqlite3 shell.
      R"sql(
CREATE VIEW trend AS
  SELECT s.id AS series_id, s.block, s.variant, s.point, s.dtype, s.layout, s.mode, s.backend, s.device_model,
         r.id AS run_id, r.date, r.git_commit, m.status, m.trust, m.phase, m.median_ms, m.q1_ms, m.q3_ms,
         m.peak_bytes
  FROM measurements m JOIN runs r ON r.id = m.run_id JOIN series s ON s.id = m.series_id;
)sql",
  };
  return migrations;
}

namespace {

struct Header {
  int64_t application_id = 0, version = 0, objects = 0;
};

// The header fields, refusing a foreign or newer database.
Header checked_header(SqliteDb& db) {
  // One statement, so one snapshot: read in three, a history another process is creating could
  // show its tables before its application_id and be taken for another application's file.
  Statement s(db,
              "SELECT (SELECT application_id FROM pragma_application_id), "
              "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)");
  if (!s.step()) throw HistoryDbError("history database " + db.path() + ": its header could not be read");
  const Header h{s.integer(0), s.integer(1), s.integer(2)};
  if (h.application_id != kHistoryApplicationId && (h.application_id != 0 || h.objects != 0 || h.version != 0))
    throw HistoryDbError("history database " + db.path() +
                         ": not a convbench history (an SQLite file of another application, application_id " +
                         std::to_string(h.application_id) + "); point --db at a convbench history or a new file");
  if (h.version > kHistorySchemaVersion)
    throw HistoryDbError("history database " + db.path() + ": written by a newer convbench (schema version " +
                         std::to_string(h.version) + ", this convbench knows up to " +
                         std::to_string(kHistorySchemaVersion) + "); use that convbench or a newer one");
  return h;
}

}  // namespace

std::vector<std::string> history_damage(SqliteDb& db, bool thorough) {
  Statement s(db, thorough ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(100)");
  std::vector<std::string> problems;
  try {
    while (s.step())
      if (s.text(0) != "ok") problems.push_back(s.text(0));
  } catch (const HistoryDbError& e) {
    // Damage can stop the check itself (a page it must read is not a b-tree page): a problem too.
    problems.push_back(std::string("the check stopped: ") + e.what());
  }
  return problems;
}

int64_t history_schema_version(SqliteDb& db) {
  const Header h = checked_header(db);
  if (h.objects == 0) return h.version;  // a new, empty file: nothing to be damaged
  if (const std::vector<std::string> problems = history_damage(db, false); !problems.empty())
    throw HistoryDbError("history database " + db.path() + ": damaged: SQLite's quick_check found " +
                         std::to_string(problems.size()) + (problems.size() >= 100 ? " or more" : "") +
                         " problem(s), the first: " + problems.front() +
                         "; restore it from a backup (`convbench history integrity` lists them; nothing was read "
                         "or written)");
  return h.version;
}

void migrate_history(SqliteDb& db) {
  int64_t version = checked_header(db).version;  // the caller has checked the file is intact
  const auto& migrations = history_migrations();
  for (; version < kHistorySchemaVersion; ++version) {
    db.exec(migrations[static_cast<size_t>(version)]);
    db.exec("PRAGMA user_version = " + std::to_string(version + 1));
  }
  db.exec("PRAGMA application_id = " + std::to_string(kHistoryApplicationId));
}

void check_history_readable(SqliteDb& db) {
  const int64_t version = history_schema_version(db);
  if (version == 0)
    throw HistoryDbError("history database " + db.path() + ": empty (no run added yet; `convbench history add` adds)");
  if (version < kHistorySchemaVersion)
    throw HistoryDbError("history database " + db.path() + ": schema version " + std::to_string(version) +
                         " is older than this convbench's " + std::to_string(kHistorySchemaVersion) +
                         "; `convbench history add` upgrades it (readers never write)");
}

}  // namespace convbench

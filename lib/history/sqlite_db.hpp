// The history in an SQLite file (the embedded default): history_db.hpp's interface over the SQLite
// C API. Every call's result is checked; a failure throws HistoryDbError with SQLite's own message,
// the path, and a hint for the failures a user can act on (locked, read-only, not a database).
#pragma once

#include <cstdint>
#include <string>

#include "history/history_db.hpp"

struct sqlite3;

namespace convbench {

class SqliteDb final : public HistoryDb {
 public:
  using Mode = HistoryAccess;
  // Opens (read_only: the file must exist; it is never created) and sets the busy timeout. The
  // name is checked first (history_file.hpp): SQLite would block on a FIFO or create through a
  // dangling link.
  SqliteDb(const std::string& path, HistoryAccess mode, int busy_timeout_ms);
  ~SqliteDb() override;

  HistoryDialect dialect() const override { return HistoryDialect::sqlite; }
  std::unique_ptr<StatementImpl> prepare(const std::string& sql) override;
  void exec(const std::string& sql) override;
  void prepare_for_writing() override;
  void begin_write() override { exec("BEGIN IMMEDIATE"); }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override;
  HistoryHeader header() override;
  std::vector<std::string> damage(bool thorough) override;
  void write_schema_version(int64_t version) override;

  sqlite3* handle() { return db_; }
  // "history database PATH: <what>: <sqlite message><hint>"
  [[noreturn]] void fail(const std::string& what, int code) const;
  using HistoryDb::fail;

 private:
  // For a statement SQLite may answer SQLITE_BUSY without calling the busy handler (a
  // journal-mode switch, which takes an exclusive lock: two processes opening a new history at
  // once race for it): tried again every few milliseconds until the busy timeout has passed.
  std::string query_text_waiting_out_busy(const std::string& sql);

  sqlite3* db_ = nullptr;
  int busy_timeout_ms_ = 0;
};

}  // namespace convbench

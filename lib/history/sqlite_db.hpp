// A thin checked wrapper over the SQLite C API for the results history: every call's result is
// checked, and a failure throws HistoryDbError carrying SQLite's own message and the database
// path, which main() reports with exit code 2. Owning types close what they opened; a
// Transaction that is not committed rolls back, so an error (or an exception anywhere between
// BEGIN and COMMIT) leaves the database as it was.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace convbench {

class HistoryDbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SqliteDb;

class Statement {
 public:
  Statement(SqliteDb& db, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQL's ?1, ?2, ...
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind_null(int index);
  // Runs to the next row: true when there is one, false when done.
  bool step();
  // Runs a statement that returns no rows, then resets it for the next bindings.
  void run();
  void reset();

  int64_t integer(int column) const;
  double number(int column) const;
  std::string text(int column) const;  // "" for NULL
  bool is_null(int column) const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  SqliteDb* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class SqliteDb {
 public:
  enum class Mode { read_only, read_write_create };
  // Opens (read_only: the file must exist; it is never created) and sets the busy timeout.
  SqliteDb(const std::string& path, Mode mode, int busy_timeout_ms);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }
  // Runs one or more statements that return nothing.
  void exec(const std::string& sql);
  // The first column of the first row of a one-row query (e.g. a PRAGMA).
  int64_t query_integer(const std::string& sql);
  std::string query_text(const std::string& sql);
  // The same for a statement SQLite may answer SQLITE_BUSY without calling the busy handler (a
  // journal-mode switch, which takes an exclusive lock: two processes opening a new history at
  // once race for it): tried again every few milliseconds until the busy timeout has passed.
  std::string query_text_waiting_out_busy(const std::string& sql);
  int64_t last_insert_id() const;
  int changes() const;  // rows the last INSERT, UPDATE or DELETE changed
  // "convbench history DB: <what>: <sqlite message> (<path>)"
  [[noreturn]] void fail(const std::string& what, int code) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  int busy_timeout_ms_ = 0;
};

// BEGIN IMMEDIATE (the write lock is taken at once, so two writers queue on the busy timeout
// instead of failing on a lock upgrade) ... COMMIT; rolled back unless commit() was called.
class Transaction {
 public:
  explicit Transaction(SqliteDb& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  SqliteDb* db_;
  bool open_ = true;
};

}  // namespace convbench

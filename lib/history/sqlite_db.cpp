#include "history/sqlite_db.hpp"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "history/history_file.hpp"
#include "history/history_schema.hpp"

namespace convbench {
namespace {

std::string describe(sqlite3* db, int code) {
  // sqlite3_errmsg says more than sqlite3_errstr ("database is locked" with the table) when the
  // handle is the one that failed.
  std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  if (msg == "not an error" || msg.empty()) msg = sqlite3_errstr(code);
  return msg;
}

// A hint for the failures a user can act on.
std::string advice(int code) {
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "; another process holds the database longer than the busy timeout: retry when it is done";
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      return "; check that the file and its directory exist and are readable (and writable, to add)";
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return "; the file is not an intact SQLite database: restore it from a backup or point --db elsewhere";
    case SQLITE_FULL: return "; the disk is full";
    default: return "";
  }
}

class SqliteStatement final : public StatementImpl {
 public:
  SqliteStatement(SqliteDb& db, const std::string& sql) : db_(&db), sql_(sql) {
    const int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) db.fail("preparing \"" + sql.substr(0, 60) + "\"", rc);
  }
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind(int index, int64_t value) override { checked(sqlite3_bind_int64(stmt_, index, value), index); }
  void bind(int index, double value) override { checked(sqlite3_bind_double(stmt_, index, value), index); }
  void bind(int index, const std::string& value) override {
    checked(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT), index);
  }
  void bind_null(int index) override { checked(sqlite3_bind_null(stmt_, index), index); }

  bool step() override {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("running");
  }
  void reset() override {
    // sqlite3_reset repeats the last step's error, which step() has already reported.
    sqlite3_reset(stmt_);
    if (sqlite3_clear_bindings(stmt_) != SQLITE_OK) fail("clearing bindings");
  }

  int64_t integer(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double number(int column) const override { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const override { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string text(int column) const override {
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    if (!t) {
      if (sqlite3_errcode(db_->handle()) == SQLITE_NOMEM) fail("reading a column (out of memory)");
      return "";
    }
    return std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
  }

 private:
  void checked(int rc, int index) const {
    if (rc != SQLITE_OK) fail("binding parameter " + std::to_string(index));
  }
  [[noreturn]] void fail(const std::string& what) const {
    db_->fail(what + " (\"" + sql_excerpt(sql_) + "\")", sqlite3_extended_errcode(db_->handle()));
  }

  SqliteDb* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

}  // namespace

SqliteDb::SqliteDb(const std::string& path, HistoryAccess mode, int busy_timeout_ms)
    : HistoryDb(path), busy_timeout_ms_(busy_timeout_ms) {
  check_history_file(path);  // before SQLite, which would block on a FIFO or create through a dangling link
  const int flags =
      (mode == HistoryAccess::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  std::string open_name = path;
  const std::string file = history_file_path(path);
  std::error_code ec;
  if (mode == HistoryAccess::read_only && std::filesystem::exists(file, ec) && history_on_read_only_place(file)) {
    // A reader of a WAL history needs to create or write its -shm index, which read-only media or
    // permissions forbid; opened immutable SQLite reads the file alone. Changes still in a -wal
    // file would then be silently missing, so that case is refused instead.
    if (std::filesystem::file_size(file + "-wal", ec) > 0 && !ec)
      throw HistoryDbError("history database " + path + ": read-only here, and its write-ahead log " + file +
                           "-wal holds runs not yet in the file, which SQLite cannot apply read-only; copy the "
                           "history with its -wal file to a writable place and read it there");
    open_name = file_uri(std::filesystem::absolute(file).string()) + "?immutable=1";
  }
  const int rc = sqlite3_open_v2(open_name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = describe(db_, rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw HistoryDbError("history database " + path + ": cannot open: " + msg + advice(rc));
  }
  sqlite3_extended_result_codes(db_, 1);
  if (const int b = sqlite3_busy_timeout(db_, busy_timeout_ms); b != SQLITE_OK) fail("setting the busy timeout", b);
}

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close_v2(db_);  // statements and transactions are closed first (RAII)
}

void SqliteDb::fail(const std::string& what, int code) const {
  HistoryDb::fail(what + ": " + describe(db_, code) + advice(code));
}

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    HistoryDb::fail(msg + advice(rc) + " (in: " + sql_excerpt(sql) + ")");
  }
}

std::string SqliteDb::query_text_waiting_out_busy(const std::string& sql) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms_);
  for (;;) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
    std::string text;
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(stmt);
      if (rc == SQLITE_ROW) {
        const unsigned char* t = sqlite3_column_text(stmt, 0);
        text = t ? reinterpret_cast<const char*>(t) : "";
      }
    }
    const int code = rc == SQLITE_ROW ? SQLITE_OK : sqlite3_extended_errcode(db_);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_ROW) return text;
    if (rc == SQLITE_DONE) fail("no result from " + sql, SQLITE_ERROR);
    const int primary = code & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || std::chrono::steady_clock::now() >= deadline)
      fail("running (\"" + sql + "\")", code);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::unique_ptr<StatementImpl> SqliteDb::prepare(const std::string& sql) {
  return std::make_unique<SqliteStatement>(*this, sql);
}

void SqliteDb::rollback() noexcept {
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);  // nothing to report where this runs (unwinding)
}

void SqliteDb::prepare_for_writing() {
  // WAL: readers keep reading while a run is added, and a crash never leaves half a transaction.
  // (journal_mode answers with the mode it ended in; anything but wal is an error worth naming.)
  if (const std::string mode = query_text_waiting_out_busy("PRAGMA journal_mode=WAL"); mode != "wal")
    HistoryDb::fail("could not switch to WAL journaling (got \"" + mode + "\")");
  exec("PRAGMA foreign_keys=ON");
}

HistoryHeader SqliteDb::header() {
  // One statement, so one snapshot: read in three, a history another process is creating could
  // show its tables before its application_id and be taken for another application's file.
  Statement s(*this,
              "SELECT (SELECT application_id FROM pragma_application_id), "
              "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)");
  if (!s.step()) HistoryDb::fail("its header could not be read");
  const int64_t application_id = s.integer(0), version = s.integer(1), objects = s.integer(2);
  if (application_id == kHistoryApplicationId) return {HistoryHeader::Kind::convbench, version, ""};
  if (application_id == 0 && objects == 0 && version == 0) return {HistoryHeader::Kind::empty, 0, ""};
  return {HistoryHeader::Kind::foreign, version,
          "an SQLite file of another application, application_id " + std::to_string(application_id)};
}

std::vector<std::string> SqliteDb::damage(bool thorough) {
  Statement s(*this, thorough ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(100)");
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

void SqliteDb::write_schema_version(int64_t version) {
  exec("PRAGMA user_version = " + std::to_string(version) +
       "; PRAGMA application_id = " + std::to_string(kHistoryApplicationId));
}

}  // namespace convbench

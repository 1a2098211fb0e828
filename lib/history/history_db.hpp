// The results history's database, whichever store holds it: an SQLite file (the embedded default:
// one machine, nothing to run) or a PostgreSQL server that a team's CI runners share
// (--db postgresql://...). The history code (history_store, history_schema) speaks one SQL to both
// through this interface: ?1-style parameters, INSERT ... ON CONFLICT DO NOTHING ... RETURNING,
// and the same tables; what differs between the stores (how a database says it is a convbench
// history and its schema version, how writers take the write lock, how damage is found) is a
// virtual call here, answered in sqlite_db.cpp and postgres_db.cpp.
//
// Every failure throws HistoryDbError carrying the store's own message and the database's name
// (a server's password hidden), which main() reports with exit code 2. Owning types close what
// they opened; a Transaction that is not committed rolls back, so an error (or an exception
// anywhere between BEGIN and COMMIT, or a kill: both stores roll back what was not committed)
// leaves the database as it was.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace convbench {

class HistoryDbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class HistoryAccess { read_only, read_write_create };
enum class HistoryDialect { sqlite, postgresql };

// What a database says it is, read before anything else is read or written.
struct HistoryHeader {
  enum class Kind { empty, convbench, foreign } kind = Kind::empty;
  int64_t version = 0;  // the schema version (convbench); 0 when empty
  std::string foreign;  // what it is instead, for the refusal ("an SQLite file of another application, ...")
};

// One prepared statement of a store. Parameters are 1-based, as in SQL's ?1, ?2, ...
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual void bind(int index, int64_t value) = 0;
  virtual void bind(int index, double value) = 0;
  virtual void bind(int index, const std::string& value) = 0;
  virtual void bind_null(int index) = 0;
  virtual bool step() = 0;   // true: a row is there to read; false: done
  virtual void reset() = 0;  // for the next bindings (bindings cleared)
  virtual int64_t integer(int column) const = 0;
  virtual double number(int column) const = 0;
  virtual std::string text(int column) const = 0;  // "" for NULL
  virtual bool is_null(int column) const = 0;
};

class HistoryDb {
 public:
  virtual ~HistoryDb() = default;
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  // The name for messages: the path as given, or the server's URI with its password hidden.
  const std::string& path() const { return name_; }
  virtual HistoryDialect dialect() const = 0;

  virtual std::unique_ptr<StatementImpl> prepare(const std::string& sql) = 0;
  // Runs one or more statements that return nothing.
  virtual void exec(const std::string& sql) = 0;
  // The first column of the first row of a one-row query.
  int64_t query_integer(const std::string& sql);
  std::string query_text(const std::string& sql);

  // Before a writer's transaction: SQLite switches to WAL (readers keep reading while a run is
  // added) and enforces foreign keys; a server needs nothing.
  virtual void prepare_for_writing() = 0;
  // The write transaction: taken at once, so that two writers queue (up to the busy timeout)
  // instead of failing halfway; SQLite's BEGIN IMMEDIATE, PostgreSQL's BEGIN and an advisory lock
  // that every convbench writer of that database takes, migrations included.
  virtual void begin_write() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;

  virtual HistoryHeader header() = 0;
  // Problems the store finds in the stored data (at most 100), empty when intact. thorough:
  // every page and index (slower; SQLite's integrity_check, which also checks indexes against
  // their tables); else the quick check every open runs (SQLite's quick_check).
  virtual std::vector<std::string> damage(bool thorough) = 0;
  // Inside the write transaction: marks the database as a convbench history at `version`.
  virtual void write_schema_version(int64_t version) = 0;

  // "history database NAME: what"
  [[noreturn]] void fail(const std::string& what) const;

 protected:
  explicit HistoryDb(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// Opens the history a name refers to: a PostgreSQL connection URI (postgresql:// or postgres://)
// is a server's database, anything else an SQLite file or file: URI (history_file.hpp). read_only
// never creates, migrates or writes. busy_timeout_ms: how long to wait for another writer.
std::unique_ptr<HistoryDb> open_history_db(const std::string& name, HistoryAccess access, int busy_timeout_ms);

// True for a PostgreSQL connection URI: not a file, so no file checks apply to it.
bool is_history_server(const std::string& name);
// The name as messages show it: a URI's password replaced by "***".
std::string history_display_name(const std::string& name);
// A statement as a message quotes it: its first 60 characters, then "..." when it is longer.
std::string sql_excerpt(const std::string& sql);

// A prepared statement of either store, as the history code uses it.
class Statement {
 public:
  Statement(HistoryDb& db, const std::string& sql) : impl_(db.prepare(sql)) {}

  Statement& bind(int index, int64_t value) {
    impl_->bind(index, value);
    return *this;
  }
  Statement& bind(int index, double value) {
    impl_->bind(index, value);
    return *this;
  }
  Statement& bind(int index, const std::string& value) {
    impl_->bind(index, value);
    return *this;
  }
  Statement& bind_null(int index) {
    impl_->bind_null(index);
    return *this;
  }
  bool step() { return impl_->step(); }
  // Runs a statement that returns no rows, then resets it for the next bindings.
  void run() {
    while (step()) {
    }
    reset();
  }
  void reset() { impl_->reset(); }
  int64_t integer(int column) const { return impl_->integer(column); }
  double number(int column) const { return impl_->number(column); }
  std::string text(int column) const { return impl_->text(column); }
  bool is_null(int column) const { return impl_->is_null(column); }

 private:
  std::unique_ptr<StatementImpl> impl_;
};

// The write transaction (begin_write ... commit); rolled back unless commit() was called.
class Transaction {
 public:
  explicit Transaction(HistoryDb& db) : db_(&db) { db.begin_write(); }
  ~Transaction() {
    if (open_) db_->rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    db_->commit();
    open_ = false;
  }

 private:
  HistoryDb* db_;
  bool open_ = true;
};

}  // namespace convbench

#include "history/postgres_db.hpp"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <vector>

#include "history/history_schema.hpp"

#ifdef CONVBENCH_WITH_POSTGRESQL
#include <libpq-fe.h>
#endif

namespace convbench {

std::string postgres_parameters(const std::string& sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;  // inside '...' or "...": a ? there is text
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < sql.size() && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
      out += '$';
      continue;
    }
    out += c;
  }
  return out;
}

#ifndef CONVBENCH_WITH_POSTGRESQL

std::unique_ptr<HistoryDb> open_postgres_history(const std::string& uri, HistoryAccess, int) {
  throw HistoryDbError("history database " + history_display_name(uri) +
                       ": this convbench was built without PostgreSQL (CMake CONVBENCH_POSTGRESQL=OFF); build it "
                       "with libpq (Debian's libpq-dev) or use an SQLite file");
}

#else

namespace {

// libpq's messages end with a newline and may span lines: one line for ours.
std::string one_line(const char* message) {
  std::string m = message ? message : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  std::string line;
  for (const char c : m) {
    if (c == '\t') continue;  // libpq indents its second line with a tab
    line += c == '\n' ? ' ' : c;
  }
  return line;
}

// A hint for the failures a user can act on, by SQLSTATE.
std::string postgres_hint(const char* sqlstate) {
  const std::string code = sqlstate ? sqlstate : "";
  if (code == "55P03")
    return "; another writer holds the history longer than the busy timeout (locked): retry when it is done, or "
           "raise --busy-timeout";
  if (code == "42501")
    return "; the role lacks a privilege here: the history's owner grants SELECT to readers, and INSERT, UPDATE "
           "and USAGE on its sequences to writers";
  if (code == "25006") return "; the session is read-only (a standby server?): add runs on the primary";
  if (code.rfind("08", 0) == 0) return "; the connection to the server was lost";
  return "";
}

// A result, cleared when it goes out of scope (a throw included).
using PgResult = std::unique_ptr<PGresult, void (*)(PGresult*)>;
PgResult pg_result(PGresult* r) { return PgResult(r, PQclear); }

class PostgresDb;

class PostgresStatement final : public StatementImpl {
 public:
  PostgresStatement(PostgresDb& db, const std::string& sql) : db_(&db), sql_(postgres_parameters(sql)) {}

  void bind(int index, int64_t value) override { slot(index) = std::to_string(value); }
  void bind(int index, double value) override {
    char buf[32];
    // The shortest text that reads back as the same double: nothing is lost on the way in.
    const auto r = std::to_chars(buf, buf + sizeof buf, value);
    slot(index) = std::string(buf, r.ptr);
  }
  void bind(int index, const std::string& value) override;
  void bind_null(int index) override { slot(index).reset(); }

  bool step() override;
  void reset() override {
    result_.reset();
    row_ = -1;
    params_.clear();
  }

  int64_t integer(int column) const override { return std::strtoll(value(column), nullptr, 10); }
  double number(int column) const override { return std::strtod(value(column), nullptr); }
  bool is_null(int column) const override { return PQgetisnull(result_.get(), row_, column) != 0; }
  std::string text(int column) const override {
    return std::string(value(column), static_cast<size_t>(PQgetlength(result_.get(), row_, column)));
  }

 private:
  std::optional<std::string>& slot(int index) {
    if (index > static_cast<int>(params_.size())) params_.resize(static_cast<size_t>(index));
    return params_[static_cast<size_t>(index - 1)];
  }
  const char* value(int column) const { return PQgetvalue(result_.get(), row_, column); }

  PostgresDb* db_;
  std::string sql_;
  std::vector<std::optional<std::string> > params_;
  PgResult result_ = pg_result(nullptr);  // every row of the last run (the history's queries are small)
  int row_ = -1;
};

class PostgresDb final : public HistoryDb {
 public:
  PostgresDb(const std::string& uri, HistoryAccess access, int busy_timeout_ms) : HistoryDb(history_display_name(uri)) {
    // connect_timeout first: a value in the URI overrides it.
    const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
    const char* values[] = {"10", "convbench", uri.c_str(), nullptr};
    // Owned from here: a refusal below throws out of this constructor, where no destructor runs.
    conn_.reset(PQconnectdbParams(keys, values, 1));
    if (!conn_) fail("cannot connect: out of memory");
    if (PQstatus(handle()) != CONNECTION_OK)
      fail("cannot connect: " + one_line(PQerrorMessage(handle())) +
           "; check the URI, that the server runs, and that the role may connect to that database");
    PQsetNoticeProcessor(
        handle(), [](void*, const char*) {}, nullptr);  // "relation exists, skipping" and the like
    // A busy timeout of 0 means "do not wait" for SQLite, "wait forever" for PostgreSQL.
    exec("SET lock_timeout = " + std::to_string(busy_timeout_ms > 0 ? busy_timeout_ms : 1) +
         "; SET client_encoding = 'UTF8'");
    if (access == HistoryAccess::read_only)
      exec("SET default_transaction_read_only = on; BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }
  // conn_ closes the connection; the server rolls back a transaction still open.

  PGconn* handle() const { return conn_.get(); }
  HistoryDialect dialect() const override { return HistoryDialect::postgresql; }
  std::unique_ptr<StatementImpl> prepare(const std::string& sql) override {
    return std::make_unique<PostgresStatement>(*this, sql);
  }

  void exec(const std::string& sql) override { check(pg_result(PQexec(handle(), sql.c_str())).get(), sql); }

  // Throws for a failed result, with the server's message and a hint.
  void check(const PGresult* r, const std::string& sql) const {
    const ExecStatusType status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return;
    const std::string message = one_line(r ? PQresultErrorMessage(r) : PQerrorMessage(handle()));
    const std::string hint = postgres_hint(r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr);
    fail(message + hint + " (in: " + sql_excerpt(sql) + ")");
  }

  void prepare_for_writing() override {}
  void begin_write() override {
    exec("BEGIN");
    exec("SELECT pg_advisory_xact_lock(" + std::to_string(kHistoryApplicationId) + ")");
  }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override { pg_result(PQexec(handle(), "ROLLBACK")); }

  HistoryHeader header() override {
    // Tables and views of the current schema, and whether convbench_history is one of them, in
    // one statement. A history is created in one transaction (DDL is transactional here), so
    // its tables and its convbench_history appear together.
    Statement s(*this,
                "SELECT count(*), count(*) FILTER (WHERE c.relname = 'convbench_history'), current_schema() "
                "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'm', 'p', 'f')");
    if (!s.step()) fail("its catalogue could not be read");
    const int64_t objects = s.integer(0);
    const bool has_marker = s.integer(1) > 0;
    const std::string schema = s.text(2);
    if (objects == 0) return {HistoryHeader::Kind::empty, 0, ""};
    const std::string other = "a PostgreSQL schema \"" + schema + "\" holding " + std::to_string(objects) +
                              " tables or views of another application, and no convbench_history table";
    if (!has_marker) return {HistoryHeader::Kind::foreign, 0, other};
    Statement m(*this, "SELECT application_id, schema_version FROM convbench_history");
    if (!m.step()) return {HistoryHeader::Kind::foreign, 0, other};
    if (m.integer(0) != kHistoryApplicationId)
      return {HistoryHeader::Kind::foreign, m.integer(1),
              "its convbench_history table names application_id " + std::to_string(m.integer(0))};
    return {HistoryHeader::Kind::convbench, m.integer(1), ""};
  }

  std::vector<std::string> damage(bool thorough) override {
    // The server keeps its pages and indexes whole itself (WAL, checksums where enabled): the
    // quick check every open runs has nothing to add. The thorough one (`history integrity`)
    // checks what convbench's tables promise, and the indexes with amcheck when the database has it.
    std::vector<std::string> problems;
    if (!thorough || header().kind != HistoryHeader::Kind::convbench) return problems;
    Statement orphans(*this,
                      "SELECT 'measurement (run ' || m.run_id || ', series ' || m.series_id || ') of a missing ' || "
                      "CASE WHEN r.id IS NULL THEN 'run' ELSE 'series' END FROM measurements m "
                      "LEFT JOIN runs r ON r.id = m.run_id LEFT JOIN series s ON s.id = m.series_id "
                      "WHERE r.id IS NULL OR s.id IS NULL LIMIT 100");
    while (orphans.step()) problems.push_back(orphans.text(0));
    if (query_integer("SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'amcheck'") > 0) {
      Statement indexes(
          *this,
          "SELECT c.relname FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid "
          "JOIN pg_catalog.pg_class t ON t.oid = i.indrelid JOIN pg_catalog.pg_namespace n ON "
          "n.oid = t.relnamespace WHERE n.nspname = current_schema() AND t.relname IN "
          "('runs', 'series', 'measurements') ORDER BY c.relname");
      std::vector<std::string> names;
      while (indexes.step()) names.push_back(indexes.text(0));
      for (const std::string& name : names) {
        // A damaged index aborts the statement, and with it the reader's transaction: each check
        // in its own savepoint, so the next one still runs.
        exec("SAVEPOINT index_check");
        const PgResult r =
            pg_result(PQexec(handle(), ("SELECT bt_index_check('" + name + "'::regclass, true)").c_str()));
        const bool ok = r && PQresultStatus(r.get()) == PGRES_TUPLES_OK;
        if (!ok) problems.push_back("index " + name + ": " + one_line(r ? PQresultErrorMessage(r.get()) : ""));
        exec(ok ? "RELEASE SAVEPOINT index_check" : "ROLLBACK TO SAVEPOINT index_check");
      }
    }
    return problems;
  }

  void write_schema_version(int64_t version) override {
    exec(
        "CREATE TABLE IF NOT EXISTS convbench_history (application_id bigint NOT NULL, schema_version bigint "
        "NOT NULL); DELETE FROM convbench_history; INSERT INTO convbench_history VALUES (" +
        std::to_string(kHistoryApplicationId) + ", " + std::to_string(version) + ")");
  }

 private:
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn_{nullptr, PQfinish};
};

void PostgresStatement::bind(int index, const std::string& value) {
  // Parameters travel as C strings: a NUL would cut the value short without a word.
  if (value.find('\0') != std::string::npos)
    db_->fail("parameter " + std::to_string(index) + " holds a NUL byte, which PostgreSQL text cannot store");
  slot(index) = value;
}

bool PostgresStatement::step() {
  if (!result_) {
    std::vector<const char*> values;
    for (const std::optional<std::string>& p : params_) values.push_back(p ? p->c_str() : nullptr);
    PgResult r = pg_result(PQexecParams(db_->handle(), sql_.c_str(), static_cast<int>(values.size()), nullptr,
                                        values.data(), nullptr, nullptr, 0));
    db_->check(r.get(), sql_);
    result_ = std::move(r);
  }
  return ++row_ < PQntuples(result_.get());
}

}  // namespace

std::unique_ptr<HistoryDb> open_postgres_history(const std::string& uri, HistoryAccess access, int busy_timeout_ms) {
  return std::make_unique<PostgresDb>(uri, access, busy_timeout_ms);
}

#endif

}  // namespace convbench

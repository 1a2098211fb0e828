#include "history/postgres_db.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
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

const std::vector<std::string>& postgres_secret_keywords() {
  static const std::vector<std::string> keys = {"password", "sslpassword"};
  return keys;
}

std::optional<bool> postgres_shows_no_secret(const std::string&) { return std::nullopt; }

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

// How long a statement may run on the server when the session does not say (its
// statement_timeout is 0): the busy timeout (a lock wait) and a minute of work beyond it.
constexpr int64_t kStatementWorkMs = 60000;
// How much longer than its statement_timeout a statement's answer may take to arrive before the
// server counts as gone (stopped, or the network between cut): the server cancels a statement
// at its timeout and says so, which takes a moment, never this long.
constexpr int64_t kAnswerMarginMs = 10000;

class PostgresDb final : public HistoryDb {
 public:
  PostgresDb(const std::string& uri, HistoryAccess access, int busy_timeout_ms) : HistoryDb(history_display_name(uri)) {
    // Before dbname, so that the URI's own values override them. connect_timeout bounds the
    // connection; TCP keepalives and tcp_user_timeout notice a peer or network that went away
    // (about 30 s); a server process that stops answering while its host still acknowledges
    // (stopped, hung) is found by the answer deadline below.
    const char* keys[] = {"connect_timeout",     "keepalives",       "keepalives_idle",
                          "keepalives_interval", "keepalives_count", "tcp_user_timeout",
                          "application_name",    "dbname",           nullptr};
    const char* values[] = {"10", "1", "15", "5", "3", "30000", "convbench", uri.c_str(), nullptr};
    // Owned from here: a refusal below throws out of this constructor, where no destructor runs.
    conn_.reset(PQconnectdbParams(keys, values, 1));
    if (!conn_) fail("cannot connect: out of memory");
    if (PQstatus(handle()) != CONNECTION_OK)
      fail("cannot connect: " + one_line(PQerrorMessage(handle())) +
           "; check the URI, that the server runs, and that the role may connect to that database");
    // Every statement is sent and waited for without blocking, so that no answer that never
    // comes can hang the process (run()).
    if (PQsetnonblocking(handle(), 1) != 0) fail("cannot use the connection: " + one_line(PQerrorMessage(handle())));
    PQsetNoticeProcessor(
        handle(), [](void*, const char*) {}, nullptr);  // "relation exists, skipping" and the like
    // A busy timeout of 0 means "do not wait" for SQLite, "wait forever" for PostgreSQL.
    const int64_t lock_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 1;
    answer_ms_ = lock_ms + kStatementWorkMs + kAnswerMarginMs;
    exec("SET lock_timeout = " + std::to_string(lock_ms) + "; SET client_encoding = 'UTF8'");
    // The session's statement_timeout (the server's default, or the URI's options=-c
    // statement_timeout=...) when it has one, else a minute beyond the lock wait: the server ends
    // a statement that runs longer, and the answer deadline follows it.
    int64_t statement_ms =
        query_integer("SELECT setting::bigint FROM pg_catalog.pg_settings WHERE name = 'statement_timeout'");
    if (statement_ms <= 0) {
      statement_ms = lock_ms + kStatementWorkMs;
      exec("SET statement_timeout = " + std::to_string(statement_ms));
    }
    answer_ms_ = statement_ms + kAnswerMarginMs;
    if (access == HistoryAccess::read_only)
      exec("SET default_transaction_read_only = on; BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }
  // conn_ closes the connection; the server rolls back a transaction still open.

  PGconn* handle() const { return conn_.get(); }
  HistoryDialect dialect() const override { return HistoryDialect::postgresql; }
  std::unique_ptr<StatementImpl> prepare(const std::string& sql) override {
    return std::make_unique<PostgresStatement>(*this, sql);
  }

  void exec(const std::string& sql) override { check(run(sql, nullptr).get(), sql); }

  // Sends `sql` (with `params` as its $1, $2, ...; nullptr: none, and `sql` may hold several
  // statements) and waits for every result, at most answer_ms_ in all; returns the first failed
  // result, else the last one, as PQexec does. A server that does not answer in time is a
  // HistoryDbError: the connection is then unusable, and closing it rolls back on the server.
  PgResult run(const std::string& sql, const std::vector<const char*>* params) {
    if (broken_) fail("the connection was given up after an earlier statement got no answer");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(answer_ms_);
    const int sent = params ? PQsendQueryParams(handle(), sql.c_str(), static_cast<int>(params->size()), nullptr,
                                                params->data(), nullptr, nullptr, 0)
                            : PQsendQuery(handle(), sql.c_str());
    if (!sent) fail(one_line(PQerrorMessage(handle())) + postgres_hint("08000") + " (in: " + sql_excerpt(sql) + ")");
    for (int flushed; (flushed = PQflush(handle())) != 0;) {
      if (flushed < 0) fail(one_line(PQerrorMessage(handle())) + postgres_hint("08000"));
      wait_for_socket(POLLOUT | POLLIN, deadline, sql);
      if (!PQconsumeInput(handle())) fail(one_line(PQerrorMessage(handle())) + postgres_hint("08000"));
    }
    PgResult kept = pg_result(nullptr);
    for (;;) {
      while (PQisBusy(handle())) {
        wait_for_socket(POLLIN, deadline, sql);
        if (!PQconsumeInput(handle())) fail(one_line(PQerrorMessage(handle())) + postgres_hint("08000"));
      }
      PgResult r = pg_result(PQgetResult(handle()));
      if (!r) break;
      const auto ok = [](const PgResult& p) {
        return PQresultStatus(p.get()) == PGRES_COMMAND_OK || PQresultStatus(p.get()) == PGRES_TUPLES_OK;
      };
      if (!kept || ok(kept)) kept = std::move(r);  // a failure, once kept, stays
    }
    return kept;
  }

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
  void rollback() noexcept override {
    try {
      run("ROLLBACK", nullptr);
    } catch (const std::exception&) {
      // No answer: closing the connection rolls the transaction back on the server.
    }
  }

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
    if (query_integer("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND "
                      "table_name = 'graph_facts'") > 0) {
      Statement facts(*this,
                      "SELECT 'graph facts (run ' || g.run_id || ', series ' || g.series_id || ') of a missing "
                      "measurement' FROM graph_facts g LEFT JOIN measurements m ON m.run_id = g.run_id AND "
                      "m.series_id = g.series_id WHERE m.run_id IS NULL LIMIT 100");
      while (facts.step()) problems.push_back(facts.text(0));
    }
    if (query_integer("SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'amcheck'") > 0) {
      Statement indexes(
          *this,
          "SELECT c.relname FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid "
          "JOIN pg_catalog.pg_class t ON t.oid = i.indrelid JOIN pg_catalog.pg_namespace n ON "
          "n.oid = t.relnamespace WHERE n.nspname = current_schema() AND t.relname IN "
          "('runs', 'series', 'measurements', 'graph_facts') ORDER BY c.relname");
      std::vector<std::string> names;
      while (indexes.step()) names.push_back(indexes.text(0));
      for (const std::string& name : names) {
        // A damaged index aborts the statement, and with it the reader's transaction: each check
        // in its own savepoint, so the next one still runs.
        exec("SAVEPOINT index_check");
        const PgResult r = run("SELECT bt_index_check('" + name + "'::regclass, true)", nullptr);
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
  // Waits until the socket is ready for `events`, or fails once `deadline` has passed: the
  // server stopped answering mid-statement (a stopped process, a cut network).
  void wait_for_socket(short events, std::chrono::steady_clock::time_point deadline, const std::string& sql) {
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        broken_ = true;
        fail("the server did not answer within " + std::to_string(answer_ms_ / 1000) +
             " s (its statement_timeout and " + std::to_string(kAnswerMarginMs / 1000) +
             " s more): is it stopped, hung or cut off? Nothing of this transaction was kept (in: " + sql_excerpt(sql) +
             ")");
      }
      pollfd fd{PQsocket(handle()), events, 0};
      if (fd.fd < 0) fail("the connection to the server was lost");
      const int ready = ::poll(&fd, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
      if (ready > 0) return;
      if (ready < 0 && errno != EINTR) fail(std::string("waiting for the server: ") + std::strerror(errno));
    }
  }

  std::unique_ptr<PGconn, void (*)(PGconn*)> conn_{nullptr, PQfinish};
  int64_t answer_ms_ = 0;  // the longest one statement's answer may take (run())
  bool broken_ = false;    // a statement got no answer: nothing more is sent
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
    PgResult r = db_->run(sql_, &values);
    db_->check(r.get(), sql_);
    result_ = std::move(r);
  }
  return ++row_ < PQntuples(result_.get());
}

}  // namespace

std::unique_ptr<HistoryDb> open_postgres_history(const std::string& uri, HistoryAccess access, int busy_timeout_ms) {
  return std::make_unique<PostgresDb>(uri, access, busy_timeout_ms);
}

const std::vector<std::string>& postgres_secret_keywords() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    if (PQconninfoOption* options = PQconndefaults()) {
      for (const PQconninfoOption* o = options; o->keyword; ++o)
        if (o->dispchar && o->dispchar[0] == '*') out.emplace_back(o->keyword);
      PQconninfoFree(options);
    }
    if (out.empty()) out = {"password", "sslpassword"};
    return out;
  }();
  return keys;
}

std::optional<bool> postgres_shows_no_secret(const std::string& uri) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(uri.c_str(), &error);
  if (error) PQfreemem(error);
  if (!options) return std::nullopt;
  bool clean = true;
  for (const PQconninfoOption* o = options; o->keyword; ++o)
    if (o->dispchar && o->dispchar[0] == '*' && o->val && std::string(o->val) != "***") clean = false;
  PQconninfoFree(options);
  return clean;
}

#endif

}  // namespace convbench

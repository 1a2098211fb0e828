#include "history/history_db.hpp"

#include "history/postgres_db.hpp"
#include "history/sqlite_db.hpp"

namespace convbench {

int64_t HistoryDb::query_integer(const std::string& sql) {
  Statement s(*this, sql);
  if (!s.step()) fail("no result from " + sql);
  return s.integer(0);
}

std::string HistoryDb::query_text(const std::string& sql) {
  Statement s(*this, sql);
  if (!s.step()) fail("no result from " + sql);
  return s.text(0);
}

std::string sql_excerpt(const std::string& sql) { return sql.substr(0, 60) + (sql.size() > 60 ? "..." : ""); }

void HistoryDb::fail(const std::string& what) const { throw HistoryDbError("history database " + name_ + ": " + what); }

bool is_history_server(const std::string& name) {
  return name.rfind("postgresql://", 0) == 0 || name.rfind("postgres://", 0) == 0;
}

std::string history_display_name(const std::string& name) {
  if (!is_history_server(name)) return name;
  std::string shown = name;
  // The user information of the authority: postgresql://user:secret@host/db.
  const size_t start = shown.find("://") + 3;
  const size_t end = shown.find_first_of("/?", start);
  const size_t at = shown.rfind('@', end == std::string::npos ? shown.size() : end);
  if (at != std::string::npos && at >= start) {
    const size_t colon = shown.find(':', start);
    if (colon != std::string::npos && colon < at) shown.replace(colon + 1, at - colon - 1, "***");
  }
  // A password among the parameters: ...?password=secret&...
  for (size_t p = shown.find("password=", shown.find('?') == std::string::npos ? shown.size() : shown.find('?'));
       p != std::string::npos; p = shown.find("password=", p + 1)) {
    if (shown[p - 1] != '?' && shown[p - 1] != '&') continue;
    const size_t value = p + 9, value_end = shown.find('&', value);
    shown.replace(value, (value_end == std::string::npos ? shown.size() : value_end) - value, "***");
  }
  return shown;
}

std::unique_ptr<HistoryDb> open_history_db(const std::string& name, HistoryAccess access, int busy_timeout_ms) {
  if (is_history_server(name)) return open_postgres_history(name, access, busy_timeout_ms);
  return std::make_unique<SqliteDb>(name, access, busy_timeout_ms);
}

}  // namespace convbench

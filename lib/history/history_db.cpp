#include "history/history_db.hpp"

#include <algorithm>

#include "history/postgres_db.hpp"
#include "history/sqlite_db.hpp"
#include "util/percent_decoding.hpp"

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
  // The parameters: every one whose key, decoded as libpq decodes it (?%70assword= is
  // password=), is a keyword libpq keeps secret, whatever its spelling in the text.
  const size_t query = shown.find('?');
  if (query != std::string::npos) {
    const std::vector<std::string>& secrets = postgres_secret_keywords();
    std::string rebuilt = shown.substr(0, query + 1);
    size_t p = query + 1;
    while (p <= shown.size()) {
      const size_t amp = std::min(shown.find('&', p), shown.size());
      std::string pair = shown.substr(p, amp - p);
      const size_t eq = pair.find('=');
      if (eq != std::string::npos &&
          std::find(secrets.begin(), secrets.end(), percent_decoded(pair.substr(0, eq))) != secrets.end())
        pair = pair.substr(0, eq + 1) + "***";
      rebuilt += pair + (amp < shown.size() ? "&" : "");
      p = amp + 1;
    }
    shown = rebuilt;
  }
  // The proof, where libpq can parse it: the text shown, read as libpq reads it, gives no secret
  // any value but "***". Should a spelling get past the masking above, nothing of the string is
  // shown rather than a secret.
  if (postgres_shows_no_secret(shown) == false)
    return shown.substr(0, start) + "(the connection string, hidden: it holds a secret convbench could not mask)";
  return shown;
}

std::unique_ptr<HistoryDb> open_history_db(const std::string& name, HistoryAccess access, int busy_timeout_ms) {
  if (is_history_server(name)) return open_postgres_history(name, access, busy_timeout_ms);
  return std::make_unique<SqliteDb>(name, access, busy_timeout_ms);
}

}  // namespace convbench

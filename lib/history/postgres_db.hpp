// The history in a PostgreSQL database that a team's CI runners share (--db postgresql://...):
// history_db.hpp's interface over libpq. The tables are SQLite's (history_schema.cpp); what
// SQLite keeps in its header pragmas is the convbench_history table (application_id,
// schema_version). Writers serialise on a transaction-scoped advisory lock (the same key in every
// convbench), so two runners adding at once queue as SQLite's writers do, migrations included,
// and a writer that dies mid-transaction leaves nothing behind (the server rolls it back).
// Readers see one snapshot (REPEATABLE READ, READ ONLY): a run added while `history check`
// reads is either wholly there or not at all.
//
// Built when CMake's CONVBENCH_POSTGRESQL is ON (the default; Debian's libpq-dev); without it a
// postgresql:// name is refused with that reason.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.hpp"

namespace convbench {

std::unique_ptr<HistoryDb> open_postgres_history(const std::string& uri, HistoryAccess access, int busy_timeout_ms);

// The SQL with SQLite's ?N parameters as PostgreSQL's $N (outside quoted text).
std::string postgres_parameters(const std::string& sql);

// The connection keywords libpq treats as secrets (its "*" display class: password,
// sslpassword, ...), as libpq lists them; password and sslpassword without libpq.
const std::vector<std::string>& postgres_secret_keywords();
// Whether `uri`, parsed as libpq parses it, gives no secret keyword any value but "***"; nullopt
// when libpq cannot parse it (or convbench is built without it): then nothing connects with it.
std::optional<bool> postgres_shows_no_secret(const std::string& uri);

}  // namespace convbench

// The history database's schema, the same tables on both stores, versioned (SQLite's
// user_version; a server's convbench_history table) and upgraded by migrations, one per version
// and store, each applied inside the write transaction that first needs it. A database written by
// a newer convbench (a version above kHistorySchemaVersion) is refused, never downgraded or
// written: an older binary cannot know what the newer tables mean. A database of another
// application (another SQLite application_id; a server schema with tables but no
// convbench_history) is not a convbench history and is refused too.
#pragma once

#include <string>
#include <vector>

#include "history/history_db.hpp"

namespace convbench {

// 'cbh1' in ASCII: PRAGMA application_id of every convbench history (`file` names it too).
inline constexpr int64_t kHistoryApplicationId = 0x63626831;
inline constexpr int64_t kHistorySchemaVersion = 3;
// Readers read this version and newer without an upgrade: version 2 lacks only the graph_facts
// table (version 3), whose facts readers then take as absent.
inline constexpr int64_t kHistoryOldestReadableVersion = 2;

// The SQL of each migration: element i takes user_version i to i + 1.
const std::vector<std::string>& history_migrations(HistoryDialect dialect = HistoryDialect::sqlite);

// The schema version, refusing a foreign, newer or damaged database (HistoryDbError; damaged:
// SQLite's quick_check, well under a millisecond on a history of a few hundred runs). Readers and
// writers call it before anything that could read or change the file (even the switch to WAL):
// a damaged page would otherwise read as "0 runs" or a short export, and be appended to.
int64_t history_schema_version(HistoryDb& db);
// For writers: brings the schema up to date inside the caller's transaction (the write lock is
// held, so two processes never migrate at once). Throws HistoryDbError for a newer or foreign
// database.
void migrate_history(HistoryDb& db);
// For readers: the schema must be present and at least kHistoryOldestReadableVersion (an older
// one asks for `history add`, which migrates; readers never write). Returns the version; throws
// HistoryDbError otherwise.
int64_t check_history_readable(HistoryDb& db);

}  // namespace convbench

// The file behind a history's name (--db, $CONVBENCH_DB): a path, or an SQLite `file:` URI. Every
// command that opens a history checks it here first, so that the history is compared with a
// command's outputs as the file it is (device and inode, whatever the spelling), and so that a
// name SQLite would block on or create through (a FIFO, a device, a dangling link) is refused
// before anything is measured or opened.
#pragma once

#include <string>
#include <vector>

namespace convbench {

// The file system path a history name refers to: the name itself, or a `file:` URI's path
// (authority `localhost` or none, query and fragment dropped, %HH decoded), as SQLite reads it.
// Throws HistoryDbError for names that are no file: "", ":memory:", `mode=memory`, a remote host.
std::string history_file_path(const std::string& name);

// Refuses (HistoryDbError, exit 2) a history name whose file exists but is not a regular file
// (FIFO, device, socket, directory) or is a symbolic link to nothing (SQLite would create its
// target). A file that does not exist yet is accepted: SQLite creates it, or a reader says so.
void check_history_file(const std::string& name);

// True when the file cannot be written here (read-only media, or no write permission on the
// file or its directory): SQLite then cannot make the write-ahead log's index (-shm) a reader
// of a WAL history needs, and the file is opened as immutable instead.
bool history_on_read_only_place(const std::string& path);

// The files a command reads when it opens this history, for the check that no output lands on
// one: the SQLite file, or nothing for a server's database (history_db.hpp's is_history_server).
std::vector<std::string> history_input_files(const std::string& name);

// True when `check --add` must create the history before reading it: a missing SQLite file, and
// any server database (there the tables may be missing, and creating them is a no-op when they
// are not: add_runs with no runs only migrates).
bool history_to_create_first(const std::string& name);

// `file:` URI of an absolute path, with '%', '?', '#' and bytes outside printable ASCII encoded.
std::string file_uri(const std::string& path);

}  // namespace convbench

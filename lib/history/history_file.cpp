#include "history/history_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "history/history_db.hpp"
#include "util/percent_decoding.hpp"

namespace convbench {
namespace {

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw HistoryDbError("history database " + name + ": " + why);
}

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

}  // namespace

std::string history_file_path(const std::string& name) {
  if (name.empty() || name == ":memory:")
    refuse("\"" + name + "\"", "names no file (SQLite would keep the history in memory and lose it on exit)");
  if (name.rfind("file:", 0) != 0) return name;
  std::string rest = name.substr(5);
  const size_t end = rest.find_first_of("?#");
  const std::string query = end == std::string::npos ? "" : rest.substr(end);
  rest = rest.substr(0, end);
  if (rest.rfind("//", 0) == 0) {
    const size_t slash = rest.find('/', 2);
    const std::string authority = rest.substr(2, slash == std::string::npos ? std::string::npos : slash - 2);
    if (!authority.empty() && authority != "localhost")
      refuse(name, "names the host \"" + authority + "\": a history is a file on this machine");
    rest = slash == std::string::npos ? "" : rest.substr(slash);
  }
  if (query.find("mode=memory") != std::string::npos)
    refuse(name, "mode=memory names no file (the history would be lost on exit)");
  const std::string path = percent_decoded(rest);
  if (path.empty()) refuse(name, "names no file");
  return path;
}

void check_history_file(const std::string& name) {
  const std::string path = history_file_path(name);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // a new history, or a reader's "cannot open"
    refuse(name, "cannot be checked: " + std::string(std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) {
    struct stat target {};
    if (::stat(path.c_str(), &target) != 0) {
      std::error_code ec;
      const auto to = std::filesystem::read_symlink(path, ec);
      refuse(name, "is a symbolic link to " + (ec ? std::string("a file") : to.string()) +
                       ", which does not exist; convbench does not create a history through a link: "
                       "name the file itself");
    }
    st = target;
  }
  if (!S_ISREG(st.st_mode))
    refuse(name, "is " + kind_of(st.st_mode) + ", not a history file; point --db at an SQLite file or a new name");
}

bool history_on_read_only_place(const std::string& path) {
  if (::access(path.c_str(), W_OK) != 0) return true;  // EROFS on read-only media, even for root
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  return ::access(dir.c_str(), W_OK | X_OK) != 0;
}

std::string file_uri(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "file:";
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u == '%' || u == '?' || u == '#' || u <= 0x20 || u >= 0x7f) {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> history_input_files(const std::string& name) {
  if (is_history_server(name)) return {};
  return {history_file_path(name)};
}

bool history_to_create_first(const std::string& name) {
  if (is_history_server(name)) return true;
  std::error_code ec;
  return !std::filesystem::exists(history_file_path(name), ec);
}

}  // namespace convbench

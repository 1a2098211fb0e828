#include "util/output_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <system_error>

#include "util/caught_signals.hpp"
#include "util/input_error.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

std::string write_failure(int err) { return std::generic_category().message(err); }

[[noreturn]] void refuse(const OutputPath& o, const std::string& why) { throw InputError({o.path, 0, 0}, o.flag, why); }

// What an existing path is, when it is not a regular file.
std::optional<std::string> not_regular(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return std::nullopt;
  if (S_ISLNK(st.st_mode))
    return "is a symbolic link: convbench does not write through links (give the file's own path)";
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a file: convbench writes regular files only";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a file: convbench writes regular files only";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a file";
  return "is not a regular file";
}

// Identifies a file: its device and inode when it exists, else its absolute path with every
// symlinked directory resolved. Two names of one file get the same identity.
std::string identity(const std::string& path, bool follow_links) {
  struct stat st {};
  const int rc = follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (rc == 0) return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return "path " + (ec ? fs::absolute(path).lexically_normal().string() : canonical.string());
}

std::string directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// The mode a new output gets: the old file's when it replaces one, else 0666 less the umask.
mode_t new_file_mode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
  mode_t mask = 022;
  std::ifstream status("/proc/self/status");  // Umask: without changing it (umask() would)
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0) mask = static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 0666 & ~mask;
}

// ---- signals (util/caught_signals.hpp) -----------------------------------------------------------

struct Interrupted {
  int signo;
};

// ---- one write, all or nothing -----------------------------------------------------------------

struct Staged {
  const OutputFile* file;
  std::string temporary;  // complete, fsync'd content, not yet in place
  std::string backup;     // a hard link to the old file while the new one goes in
  bool replaced = false;  // renamed into place
  bool existed = false;   // there was an old file
};

// Removes whatever the transaction still owns when it ends without committing: temporaries,
// and, after a partial commit, puts old files back from their backups.
class Transaction {
 public:
  explicit Transaction(std::vector<Staged>& staged) : staged_(staged) {}
  ~Transaction() {
    if (committed_) return;
    for (Staged& s : staged_) {
      const std::string& target = s.file->where.path;
      if (s.replaced) {
        if (!s.backup.empty()) {
          if (::rename(s.backup.c_str(), target.c_str()) == 0) s.backup.clear();
        } else if (!s.existed) {
          ::unlink(target.c_str());
        }
      }
      if (!s.temporary.empty()) ::unlink(s.temporary.c_str());
      if (!s.backup.empty()) ::unlink(s.backup.c_str());
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() { committed_ = true; }

 private:
  std::vector<Staged>& staged_;
  bool committed_ = false;
};

[[noreturn]] void fail(const OutputPath& o, const std::string& what, int err) {
  throw InputError({o.path, 0, 0}, o.flag, what + ": " + write_failure(err));
}

// A temporary next to `target`, created exclusively (never through an existing name).
std::pair<int, std::string> create_temporary(const OutputPath& o) {
  const fs::path target(o.path);
  std::string name =
      (fs::path(directory_of(o.path)) / ("." + target.filename().string() + ".convbench-XXXXXX")).string();
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  const int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
  if (fd < 0) fail(o, "cannot create a temporary file in " + directory_of(o.path), errno);
  return {fd, std::string(buffer.data())};
}

void write_fully(int fd, const std::string& content, const OutputPath& o, const CaughtSignals& signals) {
  size_t done = 0;
  while (done < content.size()) {
    if (signals.pending()) throw Interrupted{signals.pending()};
    const size_t chunk = std::min<size_t>(content.size() - done, size_t{1} << 20);
    const ssize_t n = ::write(fd, content.data() + done, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(o, "cannot write this output file", errno);
    }
    done += static_cast<size_t>(n);
  }
}

void stage(Staged& s, const CaughtSignals& signals, const OutputStepHook& hook) {
  const OutputPath& o = s.file->where;
  struct stat st {};
  s.existed = ::lstat(o.path.c_str(), &st) == 0;
  const mode_t mode = new_file_mode(o.path);
  auto [fd, temporary] = create_temporary(o);
  s.temporary = temporary;
  try {
    write_fully(fd, s.file->content, o, signals);
    if (::fchmod(fd, mode) != 0) fail(o, "cannot set the mode of the output file", errno);
    if (::fsync(fd) != 0) fail(o, "cannot write this output file (fsync)", errno);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail(o, "cannot write this output file (close)", errno);
  if (hook) hook("temporary written", o.path);
  if (signals.pending()) throw Interrupted{signals.pending()};
}

// A hard link to the old file under a fresh name, so that a failed commit can put it back.
std::string keep_backup(const OutputPath& o) {
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name =
        (fs::path(directory_of(o.path)) / ("." + fs::path(o.path).filename().string() + ".convbench-old-" +
                                           std::to_string(random()) + std::to_string(random())))
            .string();
    if (::link(o.path.c_str(), name.c_str()) == 0) return name;
    if (errno != EEXIST) fail(o, "cannot keep the old file while replacing it", errno);
  }
  fail(o, "cannot keep the old file while replacing it", EEXIST);
}

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // durability of the renames; some file systems refuse, and that is no error
  ::close(fd);
}

}  // namespace

void check_output_paths(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs) {
  std::map<std::string, std::string> input_ids;  // identity -> the input's path
  for (const std::string& in : inputs)
    if (!in.empty() && in != "-") input_ids.emplace(identity(in, true), in);
  std::map<std::string, const OutputPath*> seen;
  int to_stdout = 0;
  for (const OutputPath& o : outputs) {
    if (o.path.empty()) continue;
    if (o.path == "-") {
      if (++to_stdout > 1) refuse(o, "standard output (-) is named by more than one output");
      continue;
    }
    if (o.path.back() == '/') refuse(o, "names a directory, not a file");
    struct stat st {};
    if (::lstat(o.path.c_str(), &st) == 0) {
      if (const auto why = not_regular(st)) refuse(o, *why);
    } else if (errno == ENOENT) {
      struct stat dir {};
      const std::string parent = directory_of(o.path);
      if (::stat(parent.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode))
        refuse(o, "its directory " + parent + " does not exist");
    } else {
      refuse(o, "cannot be checked: " + write_failure(errno));
    }
    const std::string id = identity(o.path, false);
    if (const auto it = input_ids.find(id); it != input_ids.end())
      refuse(o, "is also an input of this command (" + it->second + "): writing it would destroy it");
    if (const auto [it, inserted] = seen.emplace(id, &o); !inserted)
      refuse(o, "is also the output of " + it->second->flag + " (" + it->second->path + ")");
  }
}

void write_output_files(const std::vector<OutputFile>& files, const std::vector<std::string>& inputs,
                        const OutputStepHook& hook) {
  std::vector<OutputPath> paths;
  for (const OutputFile& f : files) paths.push_back(f.where);
  check_output_paths(paths, inputs);

  std::vector<Staged> staged;
  const OutputFile* to_stdout = nullptr;
  for (const OutputFile& f : files) {
    if (f.where.path.empty()) continue;
    if (f.where.path == "-") {
      to_stdout = &f;
      continue;
    }
    staged.push_back(Staged{&f, {}, {}, false, false});
  }
  int interrupted = 0;
  {
    CaughtSignals signals;
    Transaction transaction(staged);
    try {
      for (Staged& s : staged) stage(s, signals, hook);
      for (Staged& s : staged)
        if (s.existed) s.backup = keep_backup(s.file->where);
      if (signals.pending()) throw Interrupted{signals.pending()};
      for (Staged& s : staged) {
        if (::rename(s.temporary.c_str(), s.file->where.path.c_str()) != 0)
          fail(s.file->where, "cannot put the output file in place", errno);
        s.temporary.clear();
        s.replaced = true;
        if (hook) hook("renamed", s.file->where.path);
      }
      transaction.commit();
    } catch (const Interrupted& i) {
      interrupted = i.signo;  // the transaction cleans up as the scope ends, then the signal goes on
    }
    if (interrupted == 0) {
      for (Staged& s : staged)
        if (!s.backup.empty()) ::unlink(s.backup.c_str());
      for (Staged& s : staged) sync_directory(directory_of(s.file->where.path));
    }
  }
  if (interrupted != 0) {
    std::raise(interrupted);  // the caller's handler now: the default action ends the process here
    throw InputError({staged.empty() ? "-" : staged.front().file->where.path, 0, 0}, "",
                     "interrupted by signal " + std::to_string(interrupted) + ": no output file was changed");
  }
  // A signal that arrived while the files went in place (after the last look, before the old
  // handlers came back): the outputs are complete, and the signal still does what it would have
  // done (ends the process, or reaches the caller's handler), instead of being dropped and the
  // process going on as if nothing had been asked of it.
  if (const int late = take_late_signal(); late != 0) std::raise(late);
  if (to_stdout != nullptr) {
    std::fwrite(to_stdout->content.data(), 1, to_stdout->content.size(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      fail(to_stdout->where, "cannot write to standard output", errno);
  }
}

}  // namespace convbench

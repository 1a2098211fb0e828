#include "util/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "util/input_error.hpp"
#include "util/sha256.hpp"

namespace convbench {
namespace {

std::string read_failure(int err) { return std::generic_category().message(err); }

std::string kind_of(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Reads `fd` to its end, refusing more than `max_bytes`.
std::string read_all(int fd, const std::string& name, const std::string& what, int64_t max_bytes) {
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError({name, 0, 0}, "", "cannot read the " + what + ": " + read_failure(errno));
    }
    if (static_cast<int64_t>(text.size()) + n > max_bytes)
      throw InputError({name, 0, 0}, "", "the " + what + " is larger than " + size_text(max_bytes) + ": not read");
    text.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

InputText read_input_file(const std::string& path, const std::string& what, int64_t max_bytes) {
  InputText in;
  in.name = path == "-" ? "standard input" : path;
  if (path == "-") {
    in.text = read_all(STDIN_FILENO, in.name, what, max_bytes);
  } else {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused right after.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw InputError({path, 0, 0}, "", "cannot open the " + what + ": " + read_failure(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const std::string kind = ::fstat(fd, &st) != 0 ? std::string("unreadable") : kind_of(st);
      ::close(fd);
      throw InputError({path, 0, 0}, "",
                       "is " + kind + ", not a " + what + ": give a regular file, or - for standard input");
    }
    if (st.st_size > max_bytes) {
      ::close(fd);
      throw InputError({path, 0, 0}, "", "the " + what + " is larger than " + size_text(max_bytes) + ": not read");
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    try {
      in.text = read_all(fd, path, what, max_bytes);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
  in.sha256 = sha256_hex(in.text);
  return in;
}

}  // namespace convbench

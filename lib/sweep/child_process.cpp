#include "sweep/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace convbench {
namespace {

std::runtime_error failure(const std::string& what, int err) {
  return std::runtime_error(what + ": " + std::generic_category().message(err));
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw failure("pipe", errno);
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("run_child: no program");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Pipe out, err, exec_status;  // exec_status: the child's errno when execvp fails (closed on success)
  const pid_t pid = ::fork();
  if (pid < 0) throw failure("fork for " + argv[0], errno);
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    if (::dup2(out.fd[1], STDOUT_FILENO) < 0 || ::dup2(err.fd[1], STDERR_FILENO) < 0) ::_exit(127);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull < 0 || ::dup2(devnull, STDIN_FILENO) < 0) ::_exit(127);
    ::execvp(args[0], args.data());
    const int e = errno;
    [[maybe_unused]] const ssize_t n = ::write(exec_status.fd[1], &e, sizeof e);
    ::_exit(127);
  }
  out.close_end(1);
  err.close_end(1);
  exec_status.close_end(1);

  ChildResult result;
  int exec_errno = 0;
  ssize_t got;
  do got = ::read(exec_status.fd[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  const bool exec_failed = got == static_cast<ssize_t>(sizeof exec_errno);

  // Both streams at once, so a child filling one pipe never blocks on it while we wait on the other.
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_streams = 2;
  while (open_streams > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw failure("poll on " + argv[0] + "'s output", errno);
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw failure("reading " + argv[0] + "'s output", errno);
      if (n == 0) {
        fds[i].fd = -1;
        --open_streams;
      } else {
        sinks[i]->append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw failure("waiting for " + argv[0], errno);
  if (exec_failed) throw failure("cannot run " + argv[0], exec_errno);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string describe_failure(const ChildResult& result) {
  std::string first_line = result.err.substr(0, result.err.find('\n'));
  if (first_line.empty()) first_line = result.out.substr(0, result.out.find('\n'));
  if (result.signal != 0) return "killed by signal " + std::to_string(result.signal);
  return "exit code " + std::to_string(result.exit_code) + (first_line.empty() ? "" : ": " + first_line);
}

}  // namespace convbench

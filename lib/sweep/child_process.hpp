// Running another program (sbatch, squeue) with an argument vector: fork and execvp, no shell,
// so nothing in an argument (a path, a partition name) is ever interpreted. Its standard output
// and error are captured.
#pragma once

#include <string>
#include <vector>

namespace convbench {

struct ChildResult {
  int exit_code = -1;  // -1 when a signal ended it
  int signal = 0;
  std::string out, err;
};

// Throws std::runtime_error when the program cannot be started (not found, not executable: the
// message says which and why) or a system call fails; otherwise returns however it ended.
ChildResult run_child(const std::vector<std::string>& argv);

// "exit code 1: <its stderr, first line>" or "killed by signal 9", for messages.
std::string describe_failure(const ChildResult& result);

}  // namespace convbench

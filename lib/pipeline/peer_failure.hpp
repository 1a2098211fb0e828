// How a failed peer process is described in one line: a Python program says what went wrong on
// the last line of its standard error (a traceback's exception), not the first.
#pragma once

#include <string>

#include "sweep/child_process.hpp"

namespace convbench {

// "exit code 1: ModuleNotFoundError: No module named 'torch'", "killed by signal 11".
std::string child_failure(const ChildResult& result);

}  // namespace convbench

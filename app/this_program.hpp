// This program's own path (/proc/self/exe): what slurm's jobs run, and where compare --peer looks
// for the checkout that holds the peer's scripts.
#pragma once

#include <string>

namespace convbench::cli {

// Throws std::runtime_error when the kernel does not say.
std::string this_program();

}  // namespace convbench::cli

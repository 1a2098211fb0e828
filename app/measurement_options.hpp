// The measurement flags shared by `compare` and `explain`: the device, the stopping rule, the
// seed, per-op and cold timing, CUDA graphs and algorithms, the memory limit, threads, quiet.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "pipeline/compare.hpp"

namespace convbench::cli {

// `memory_limit` receives --memory-limit's text (parse_byte_size turns it into bytes).
void add_measurement_options(CLI::App& sub, CompareOptions& c, std::string& memory_limit);

}  // namespace convbench::cli

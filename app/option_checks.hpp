// Checks of numeric command-line options, shared by the subcommands: every value must be finite
// and in range (a NaN timeout would run forever, a negative sample count would never stop), and
// a bad one is a usage error (exit 2) naming the option.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "spec/spec_loader.hpp"

namespace convbench::cli {

// A real number, finite, within [lo, hi] (NaN and infinities are refused).
CLI::Validator finite_in(double lo, double hi);
// Decimal unit suffixes for the device's rates, as datasheets write them: "19.5T" (FLOP/s) is
// 1.95e13, "4.8T" (bytes/s) 4.8e12; k, M, G, T, P are powers of 1000, and a plain number stays.
// Applied before finite_in's range check.
CLI::AsNumberWithUnit decimal_units();
// --max-runs N: how many runs (block x sweep point x variant) a spec may expand to;
// --max-network-ops N: how many ops one network variant may expand to; --sweep; --input SHAPE: a
// model file's input shape (spec/model_file_spec.hpp).
void add_spec_limit_option(CLI::App& sub, SpecLimits& limits);
// "4GiB", "512MiB", "64KiB", "1000000" (bytes); 0 means no limit. Throws InputError naming
// `option` for anything else, or a size beyond int64.
int64_t parse_byte_size(const std::string& text, const std::string& option);
// "a,b,c" as its items (--columns, --latex-columns, --pair-by); an empty item is an InputError
// naming `option` and calling the item `what` ("column name", "field").
std::vector<std::string> comma_list(const std::string& text, const char* option, const std::string& what);
// --limits NAME: the help text (the known names, and what a floor drawn from a datasheet is).
std::string limits_device_help();
// --limits NAME must name a GPU whose datasheet convbench holds (results/gpu_datasheets.hpp), and
// is not given with --peak-flops or --bandwidth (two sources for one roof): InputError naming
// --limits otherwise, listing the known names. Before any work, so that nothing is written.
void check_limits_device(const std::string& name, double peak_flops, double bandwidth);

}  // namespace convbench::cli

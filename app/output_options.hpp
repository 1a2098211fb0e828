// The output flags shared by `analyze` and `compare`: --json, --csv, --markdown, --latex,
// --gbench-json, --html. Every file is rendered from the same ResultSet and written
// all-or-nothing; the terminal table goes to stdout, coloured only when stdout is a terminal.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "report/results.hpp"

namespace convbench::cli {

struct OutputOptions {
  std::string json, csv, markdown, latex, gbench_json, html;
};

void add_output_options(CLI::App& sub, OutputOptions& options);
// Renders every requested file, then writes them all (or none, throwing SpecError).
void write_output_files(const OutputOptions& options, const ResultSet& results);
// The terminal tables on stdout.
void print_tables(const ResultSet& results);
// Whether standard output is a terminal (colour is used only then).
bool stdout_is_terminal();

}  // namespace convbench::cli

// The output flags shared by `analyze` and `compare`: --json, --csv, --markdown, --latex,
// --gbench-json, --html, one per file format of report/report_formats.hpp. Every file is rendered from the same
// ResultSet and written all-or-nothing (util/output_writer.hpp); `-` is standard output, which then carries that format
// alone. Otherwise the terminal table goes to stdout, coloured only when it is a terminal.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report/peer_comparison.hpp"
#include "report/summary_tables.hpp"
#include "results/results.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {

struct OutputOptions {
  // The file each output flag names, by format ("json": --json's); "" or absent when not asked for.
  std::map<std::string, std::string> files;
  bool colour = false;           // ANSI colour in the terminal table (set from --color, see colour_for)
  std::string format = "table";  // what standard output shows (unless an output is `-`)
  bool wide = false;
  std::string columns;                   // comma-separated column names
  std::string latex_columns;             // comma-separated LaTeX column names
  bool latex_whole_sweeps = false;       // --latex-sweep-table
  std::string plots;                     // --plots DIR: standalone SVG (and PDF) figures
  double peak_flops = 0, bandwidth = 0;  // --peak-flops / --bandwidth: the roof of a device convbench cannot name
  std::string limits_device;             // --limits NAME: a GPU's datasheet (results/gpu_datasheets.hpp)
  std::string peer_json;                 // compare --peer: the peer's results file (--peer-json)

  // files[format], "" when that format was not asked for.
  std::string file(const std::string& format) const;
};

// What `compare --peer` adds to the outputs: the comparison after the tables (terminal, Markdown)
// and as the HTML report's last section, and the peer's results file for --peer-json.
struct PeerOutputs {
  const PeerComparison* comparison = nullptr;
  std::string peer_json;  // the text of the peer's results file
};

void add_output_options(CLI::App& sub, OutputOptions& options);
// --wide and --columns (also used by `report`), and --format for what standard output shows.
void add_table_options(CLI::App& sub, OutputOptions& options);
// The table columns asked for; InputError naming --columns for an unknown name.
TableOptions table_options(const OutputOptions& options);
// The checks of --plots, --peak-flops, --bandwidth and --limits that can be made before any work.
void check_figure_options(const OutputOptions& options);
// `results` with the device limits --peak-flops/--bandwidth or --limits give
// (provenance.device_limits), so the HTML roofline, the figures and the JSON carry them; `results`
// unchanged without them.
ResultSet with_device_limits(const OutputOptions& options, const ResultSet& results);
// Appends the --plots figures to `files` (and says on stderr why there are no PDFs, if so).
void add_figure_files(const OutputOptions& options, const ResultSet& results, std::vector<OutputFile>& files);
// Refuses bad output paths (InputError) before any work: a device, FIFO, directory or symlink, an
// input of the command, the same file twice.
void check_result_paths(const OutputOptions& options, const std::vector<std::string>& inputs);
// Renders every requested file, then writes them all (or none, throwing InputError), then prints
// the terminal tables unless an output went to standard output. With `peer`, the comparison
// follows the tables (table, md) or ends the report (html), and --peer-json is written too.
void write_results(const OutputOptions& options, const ResultSet& results, const std::vector<std::string>& inputs,
                   const PeerOutputs& peer = {});
// Standard output carries one format: an output file named `-` beside a --format that asks
// standard output for something other than `plain` is refused (InputError naming --format).
void check_one_format_on_stdout(const std::vector<OutputPath>& paths, const std::string& format,
                                const std::string& plain);
// Writes `files` all or none (write_output_files), then `stdout_text()` on standard output unless
// one of the files went there (`explain` and `advise`: their reports, beside their files).
void write_files_else_stdout(const std::vector<OutputFile>& files, const std::vector<std::string>& inputs,
                             const std::function<std::string()>& stdout_text);
// Whether standard output is a terminal (colour is used only then).
bool stdout_is_terminal();

// The global --color option: never, always, or auto (colour on a terminal unless the NO_COLOR
// environment variable is set to anything non-empty, as https://no-color.org asks).
inline constexpr const char* kColorOption = "--color";
bool colour_wanted(const std::string& mode, bool is_terminal, const char* no_color_env);
// colour_wanted for a stream (stdout or stderr), from the --color given to `sub`'s parent.
bool colour_for(const CLI::App& sub, FILE* stream);

}  // namespace convbench::cli

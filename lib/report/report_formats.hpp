// Every format a ResultSet can be rendered in, one entry each in output_formats(): `report
// --format`, `--format` and the output flags of `analyze` and `compare` (--json, --csv,
// --markdown, --latex, --gbench-json, --html) and their help, which files are checked and written,
// where warnings and a peer comparison go. Adding a format is its writer plus one entry.
#pragma once

#include <string>
#include <vector>

#include "report/peer_comparison.hpp"
#include "report/summary_tables.hpp"
#include "results/results.hpp"

namespace convbench {

// What a writer is given besides the results.
struct RenderOptions {
  bool colour = false;  // ANSI colour for a terminal (the terminal table only; never in a file)
  TableOptions tables;  // which columns (the tables, LaTeX)
  // compare --peer: the comparison with the peer, for the formats that show it (the tables
  // follow theirs with it, the HTML report ends with it); the others leave it out.
  const PeerComparison* peer = nullptr;
};

struct OutputFormat {
  std::string name;  // its spelling for --format: "md"
  // The flag of analyze and compare that writes it to a file ("--markdown"), and that flag's help;
  // "" for a format only standard output shows (the terminal table).
  std::string flag;
  std::string flag_help;
  // Where the flag stands in --help, and so in which order the files are checked and written. The
  // --format list is in the table's order instead: --help has published both orders.
  int flag_position = 0;
  // Whether its text carries the run's warnings (report/run_warnings.hpp) for a reader, as the
  // tables' notes and LaTeX's comments do; the data formats do not, so the warnings go to stderr.
  bool states_warnings = false;
  // Whether it draws a roofline, which needs the device's limits (compare says why there are none).
  bool draws_roofline = false;
  std::string (*render)(const ResultSet& results, const RenderOptions& options) = nullptr;
  // What `report --against PEER` writes in this format: the comparison, alone or in the report it
  // ends; null for a format that shows no comparison.
  std::string (*render_comparison)(const ResultSet& results, const PeerComparison& comparison) = nullptr;
};

// In the order --format lists them: table | md | csv | latex | html | gbench-json | json.
const std::vector<OutputFormat>& output_formats();
// The formats that have a flag, in the order of their flags (flag_position).
std::vector<const OutputFormat*> file_output_formats();
// Throws std::invalid_argument for an unknown name.
const OutputFormat& output_format(const std::string& name);

// The names of output_formats(), in its order.
std::vector<std::string> report_format_names();
// `colour` applies to "table" only (ANSI colour for a terminal), `tables` to "table" and "md"
// (which columns) and "latex" (its columns). Throws std::invalid_argument for an unknown format.
std::string render_results(const ResultSet& results, const std::string& format, bool colour = false,
                           const TableOptions& tables = {});
// output_format(format).states_warnings.
bool format_states_warnings(const std::string& format);

}  // namespace convbench

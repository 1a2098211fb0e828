// Every format a ResultSet can be rendered in, by name: what `report --format` and the output
// flags of `analyze` and `compare` (--json, --csv, --markdown, --latex, --gbench-json, --html) write.
#pragma once

#include <string>
#include <vector>

#include "report/summary_tables.hpp"
#include "results/results.hpp"

namespace convbench {

// table | md | csv | latex | html | gbench-json | json
const std::vector<std::string>& report_format_names();
// `colour` applies to "table" only (ANSI colour for a terminal), `tables` to "table" and "md"
// (which columns). Throws std::invalid_argument for an unknown format.
std::string render_results(const ResultSet& results, const std::string& format, bool colour = false,
                           const TableOptions& tables = {});
// Whether the format's text carries the run's warnings (report/run_warnings.hpp) for a reader:
// the tables' notes (table, md, html) and LaTeX's comments do; the data formats do not.
bool format_states_warnings(const std::string& format);

}  // namespace convbench

// Every format a ResultSet can be rendered in, by name: what `report --format` and the output
// flags of `analyze` and `compare` (--json, --csv, --markdown, --latex, --gbench-json, --html) write.
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

// table | md | csv | latex | html | gbench-json | json
const std::vector<std::string>& report_format_names();
// `colour` applies to "table" only (ANSI colour for a terminal). Throws std::invalid_argument
// for an unknown format.
std::string render_results(const ResultSet& results, const std::string& format, bool colour = false);

}  // namespace convbench

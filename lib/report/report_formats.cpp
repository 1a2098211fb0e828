#include "report/report_formats.hpp"

#include <stdexcept>

#include "report/gbench_json.hpp"
#include "report/html_report.hpp"
#include "report/latex_table.hpp"
#include "report/results_csv.hpp"
#include "report/summary_tables.hpp"
#include "results/json_results.hpp"
#include "util/json_text.hpp"

namespace convbench {

const std::vector<std::string>& report_format_names() {
  static const std::vector<std::string> names = {"table", "md", "csv", "latex", "html", "gbench-json", "json"};
  return names;
}

std::string render_results(const ResultSet& results, const std::string& format, bool colour,
                           const TableOptions& tables) {
  if (format == "table") return format_tables(results, TableStyle::terminal, colour, tables);
  if (format == "md") return format_tables(results, TableStyle::markdown, false, tables);
  if (format == "csv") return format_csv(results);
  if (format == "latex") return format_latex(results, tables.latex_columns);
  if (format == "html") return format_html(results);
  if (format == "gbench-json") return json_text(results_to_gbench_json(results), 2) + "\n";
  if (format == "json") return json_text(results_to_json(results), 2) + "\n";
  throw std::invalid_argument("unknown report format \"" + format + "\"");
}

bool format_states_warnings(const std::string& format) {
  return format == "table" || format == "md" || format == "latex" || format == "html";
}

}  // namespace convbench

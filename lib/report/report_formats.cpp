#include "report/report_formats.hpp"

#include <algorithm>
#include <stdexcept>

#include "report/gbench_json.hpp"
#include "report/html_report.hpp"
#include "report/latex_table.hpp"
#include "report/results_csv.hpp"
#include "results/json_results.hpp"
#include "util/json_text.hpp"

namespace convbench {
namespace {

// The tables, and after them the peer comparison in the same style.
std::string tables_with_peer(const ResultSet& results, TableStyle style, const RenderOptions& o) {
  std::string text = format_tables(results, style, style == TableStyle::terminal && o.colour, o.tables);
  if (o.peer) text += "\n" + format_peer_comparison(*o.peer, style);
  return text;
}

}  // namespace

const std::vector<OutputFormat>& output_formats() {
  static const std::vector<OutputFormat> formats = {
      {.name = "table",
       .flag = "",
       .flag_help = "",
       .flag_position = -1,
       .states_warnings = true,
       .draws_roofline = false,
       .render = [](const ResultSet& r,
                    const RenderOptions& o) { return tables_with_peer(r, TableStyle::terminal, o); },
       .render_comparison = [](const ResultSet&,
                               const PeerComparison& c) { return format_peer_comparison(c, TableStyle::terminal); }},
      {.name = "md",
       .flag = "--markdown",
       .flag_help = "Write Markdown tables",
       .flag_position = 2,
       .states_warnings = true,
       .draws_roofline = false,
       .render = [](const ResultSet& r,
                    const RenderOptions& o) { return tables_with_peer(r, TableStyle::markdown, o); },
       .render_comparison = [](const ResultSet&,
                               const PeerComparison& c) { return format_peer_comparison(c, TableStyle::markdown); }},
      {.name = "csv",
       .flag = "--csv",
       .flag_help = "Write a tidy CSV (one row per block x variant x point)",
       .flag_position = 1,
       .states_warnings = false,
       .draws_roofline = false,
       .render = [](const ResultSet& r, const RenderOptions&) { return format_csv(r); },
       .render_comparison = nullptr},
      {.name = "latex",
       .flag = "--latex",
       .flag_help = "Write booktabs LaTeX tables (one per block; needs \\usepackage{booktabs})",
       .flag_position = 3,
       .states_warnings = true,
       .draws_roofline = false,
       .render =
           [](const ResultSet& r, const RenderOptions& o) {
             return format_latex(r, o.tables.latex_columns,
                                 o.tables.latex_whole_sweeps ? LatexGrouping::per_block : LatexGrouping::per_point);
           },
       .render_comparison = nullptr},
      {.name = "html",
       .flag = "--html",
       .flag_help = "Write a self-contained HTML report with plots",
       .flag_position = 5,
       .states_warnings = true,
       .draws_roofline = true,
       .render = [](const ResultSet& r, const RenderOptions& o) { return format_html(r, o.peer); },
       .render_comparison = [](const ResultSet& r, const PeerComparison& c) { return format_html(r, &c); }},
      {.name = "gbench-json",
       .flag = "--gbench-json",
       .flag_help = "Write Google Benchmark JSON (for tools/compare.py and dashboards)",
       .flag_position = 4,
       .states_warnings = false,
       .draws_roofline = false,
       .render = [](const ResultSet& r,
                    const RenderOptions&) { return json_text(results_to_gbench_json(r), 2) + "\n"; },
       .render_comparison = nullptr},
      {.name = "json",
       .flag = "--json",
       .flag_help = "Write results JSON (the source of truth, raw samples included) to this file",
       .flag_position = 0,
       .states_warnings = false,
       .draws_roofline = false,
       .render = [](const ResultSet& r, const RenderOptions&) { return json_text(results_to_json(r), 2) + "\n"; },
       .render_comparison = nullptr},
  };
  return formats;
}

std::vector<const OutputFormat*> file_output_formats() {
  std::vector<const OutputFormat*> out;
  for (const OutputFormat& f : output_formats())
    if (!f.flag.empty()) out.push_back(&f);
  std::sort(out.begin(), out.end(),
            [](const OutputFormat* a, const OutputFormat* b) { return a->flag_position < b->flag_position; });
  return out;
}

const OutputFormat& output_format(const std::string& name) {
  for (const OutputFormat& f : output_formats())
    if (f.name == name) return f;
  throw std::invalid_argument("unknown report format \"" + name + "\"");
}

std::vector<std::string> report_format_names() {
  std::vector<std::string> names;
  for (const OutputFormat& f : output_formats()) names.push_back(f.name);
  return names;
}

std::string render_results(const ResultSet& results, const std::string& format, bool colour,
                           const TableOptions& tables) {
  return output_format(format).render(results, {colour, tables, nullptr});
}

bool format_states_warnings(const std::string& format) { return output_format(format).states_warnings; }

}  // namespace convbench

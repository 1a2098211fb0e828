#include "output_options.hpp"

#include <cstdio>
#include <iostream>
#include <unistd.h>

#include "output_files.hpp"
#include "report/report_formats.hpp"

namespace convbench::cli {

void add_output_options(CLI::App& sub, OutputOptions& o) {
  sub.add_option("--json", o.json, "Write results JSON (the source of truth, raw samples included) to this file");
  sub.add_option("--csv", o.csv, "Write a tidy CSV (one row per block x variant x point)");
  sub.add_option("--markdown", o.markdown, "Write Markdown tables");
  sub.add_option("--latex", o.latex, "Write booktabs LaTeX tables (one per block; needs \\usepackage{booktabs})");
  sub.add_option("--gbench-json", o.gbench_json, "Write Google Benchmark JSON (for tools/compare.py and dashboards)");
  sub.add_option("--html", o.html, "Write a self-contained HTML report with plots");
}

void write_output_files(const OutputOptions& o, const ResultSet& results) {
  PendingOutputs out;
  const std::pair<const std::string*, const char*> files[] = {{&o.json, "json"},   {&o.csv, "csv"},
                                                              {&o.markdown, "md"}, {&o.latex, "latex"},
                                                              {&o.gbench_json, "gbench-json"}, {&o.html, "html"}};
  for (const auto& [path, format] : files)
    if (!path->empty()) out.add(*path, render_results(results, format));
  out.write_all();
}

bool stdout_is_terminal() { return ::isatty(::fileno(stdout)) == 1; }

void print_tables(const ResultSet& results) { std::cout << render_results(results, "table", stdout_is_terminal()); }

}  // namespace convbench::cli

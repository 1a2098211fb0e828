// convbench report RESULTS.json: regenerates any output format from saved results, no re-run.
#include <iostream>

#include "commands.hpp"
#include "output_files.hpp"
#include "report/json_results.hpp"
#include "report/summary_tables.hpp"

namespace convbench::cli {

Command add_report_command(CLI::App& app) {
  struct Options {
    std::string results, format = "table", output;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("report", "Render saved results JSON as a table, Markdown, CSV or JSON");
  sub->add_option("results", opt->results, "A results JSON written by analyze or compare")->required();
  sub->add_option("--format", opt->format, "table | md | csv | json")
      ->check(CLI::IsMember({"table", "md", "csv", "json"}))
      ->capture_default_str();
  sub->add_option("-o,--output", opt->output, "Write to this file instead of standard output");
  return {sub, [opt] {
            const ResultSet results = load_results_file(opt->results);
            std::string text;
            if (opt->format == "table") text = format_tables(results, TableStyle::terminal);
            else if (opt->format == "md") text = format_tables(results, TableStyle::markdown);
            else if (opt->format == "csv") text = format_csv(results);
            else text = results_to_json(results).dump(2) + "\n";
            if (opt->output.empty()) {
              std::cout << text;
            } else {
              PendingOutputs out;
              out.add(opt->output, text);
              out.write_all();
            }
            return 0;
          }};
}

}  // namespace convbench::cli

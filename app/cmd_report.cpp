// convbench report RESULTS.json: regenerates any output format from saved results, no re-run;
// with --against PEER.json, puts convbench's counts, times and memory side by side with another
// engine's (scripts/torch_peer.py) and exits 1 when parameter or MAC counts differ.
#include <iostream>

#include "commands.hpp"
#include "output_options.hpp"
#include "report/figure_files.hpp"
#include "report/peer_comparison.hpp"
#include "report/report_formats.hpp"
#include "results/json_results.hpp"
#include "spec/suggest.hpp"
#include "util/input_error.hpp"
#include "util/join.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {

Command add_report_command(CLI::App& app) {
  struct Options {
    std::string results, format = "table", output, against;
    OutputOptions tables;  // --wide, --columns
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "report", "Render saved results JSON as a table, Markdown, CSV, LaTeX, HTML, Google Benchmark JSON or JSON");
  sub->add_option("results", opt->results, "A results JSON written by analyze or compare")->required();
  sub->add_option("--format", opt->format, join(report_format_names(), " | "))
      ->check(CLI::IsMember(report_format_names()))
      ->capture_default_str();
  add_table_options(*sub, opt->tables);
  sub->add_option("-o,--output", opt->output, "Write to this file instead of standard output (- is standard output)");
  sub->add_option("--against", opt->against,
                  "Another engine's results (scripts/torch_peer.py --json) to compare with, side by side "
                  "(formats table, md, html; exit 1 when counts differ)");
  return {sub, [opt, sub] {
            const std::vector<std::string> inputs = {opt->results, opt->against};
            check_output_paths({{opt->output, "-o"}}, inputs);
            const TableOptions tables = table_options(opt->tables);
            check_figure_options(opt->tables);
            const ResultSet results = with_device_limits(opt->tables, load_results_file(opt->results));
            std::string text;
            int exit_code = 0;
            const bool colour = opt->output.empty() && colour_for(*sub, stdout);
            const OutputFormat& format = output_format(opt->format);
            if (!opt->against.empty()) {
              if (!format.render_comparison) {
                std::vector<std::string> showing;
                for (const OutputFormat& f : output_formats())
                  if (f.render_comparison) showing.push_back(f.name);
                throw InputError({"command line", 0, 0}, "--format",
                                 "--against renders as " + join_alternatives(showing) + ", not " + opt->format);
              }
              const ResultSet peer = load_results_file(opt->against);
              const PeerComparison comparison = compare_with_peer(results, peer);
              text = format.render_comparison(results, comparison);
              exit_code = comparison.exit_code();
            } else {
              text = format.render(results, {colour, tables, nullptr});
            }
            std::vector<OutputFile> files = {{{opt->output.empty() ? "-" : opt->output, "-o"}, text}};
            PlotDirectory plot_dir(opt->tables.plots);
            add_figure_files(opt->tables, results, files);
            write_output_files(files, inputs);
            plot_dir.keep();
            return exit_code;
          }};
}

}  // namespace convbench::cli

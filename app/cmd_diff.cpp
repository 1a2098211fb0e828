// convbench diff BASE.json NEW.json: direction-aware regression verdicts for CI. Exit code 0: no
// regression; 1: something is slower, uses more memory, or stopped running; 3: only ambiguous
// changes (within the noise; re-run with more samples); 2: bad input.
#include <iostream>

#include "commands.hpp"
#include "output_files.hpp"
#include "report/json_results.hpp"
#include "report/regression_diff.hpp"

namespace convbench::cli {

Command add_diff_command(CLI::App& app) {
  struct Options {
    std::string base, next, markdown;
    DiffOptions diff;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "diff", "Compare two results files: SLOWER / FASTER / SAME / AMBIGUOUS per time, MORE / LESS per memory "
              "(exit 0 no regression, 1 regression, 3 ambiguous only, 2 bad input)");
  sub->add_option("base", opt->base, "Results JSON of the baseline (e.g. the main branch)")->required();
  sub->add_option("new", opt->next, "Results JSON to judge (e.g. the pull request)")->required();
  sub->add_option("--time-threshold", opt->diff.time_threshold,
                  "Relative change of a median time that counts (0.05 = 5%); it must also clear the quartiles")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--memory-threshold", opt->diff.memory_threshold, "Relative change of peak memory that counts")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--markdown", opt->markdown, "Also write the report as Markdown (for a pull-request comment)");
  return {sub, [opt] {
            const ResultSet base = load_results_file(opt->base);
            const ResultSet next = load_results_file(opt->next);
            const DiffReport report = diff_results(base, next, opt->diff, opt->base, opt->next);
            if (!opt->markdown.empty()) {
              PendingOutputs out;
              out.add(opt->markdown, format_diff(report, TableStyle::markdown));
              out.write_all();
            }
            std::cout << format_diff(report, TableStyle::terminal);
            return report.exit_code();
          }};
}

}  // namespace convbench::cli

// convbench diff BASE.json NEW.json: direction-aware regression verdicts for CI. Exit code 0: no
// regression; 1: something is slower, uses more memory, stopped running or went missing; 3: a
// change in the slower direction within the noise (re-run with more samples); 2: bad input,
// including two files with no row in common. --calibrate: an A/A comparison that suggests
// thresholds (report/diff_calibration.hpp). --interleave: BASE and NEW are specs, measured here
// in alternating rounds (pipeline/interleaved_diff.hpp, report/interleaved_verdict.hpp).
#include <iostream>

#include "commands.hpp"
#include "measurement_options.hpp"
#include "option_checks.hpp"
#include "pipeline/interleaved_diff.hpp"
#include "report/diff_calibration.hpp"
#include "report/interleaved_verdict.hpp"
#include "report/regression_diff.hpp"
#include "results/json_results.hpp"
#include "spec/spec_loader.hpp"
#include "util/input_error.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {

Command add_diff_command(CLI::App& app) {
  struct Options {
    std::string base, next, markdown;
    DiffOptions diff;
    std::string pair_by;
    bool calibrate = false;
    bool interleave = false;
    InterleavedOptions interleaved;
    std::string memory_limit = "0";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "diff",
      "Compare two results files, or two specs measured here in alternating rounds (--interleave): SLOWER / "
      "FASTER / SAME / AMBIGUOUS per time, MORE / LESS per memory (exit 0 no regression, 1 regression, 3 "
      "ambiguous only, 4 something not judged, 2 bad input)");
  sub->add_option("base", opt->base, "Results JSON of the baseline (e.g. the main branch); with --interleave, its spec")
      ->required();
  sub->add_option("new", opt->next, "Results JSON to judge (e.g. the pull request); with --interleave, its spec")
      ->required();
  sub->add_option("--time-threshold", opt->diff.time_threshold,
                  "Relative change of a median time that counts (0.05 = 5%); it must also clear the quartiles")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  sub->add_option("--memory-threshold", opt->diff.memory_threshold, "Relative change of peak memory that counts")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  sub->add_option("--markdown", opt->markdown, "Also write the report as Markdown (for a pull-request comment)");
  sub->add_flag("--allow-missing", opt->diff.allow_missing,
                "Rows of BASE missing from NEW are listed instead of FAILED (a block or variant renamed on purpose)");
  sub->add_flag("--judge-disturbed", opt->diff.judge_disturbed,
                "Give time verdicts to rows flagged disturbed (by default they are reported, not judged)");
  sub->add_flag("--accept-unjudged", opt->diff.accept_unjudged,
                "Exit 0 instead of 4 when comparisons could not be judged (a disturbed side, a time only one side "
                "has): accept them explicitly");
  sub->add_flag("--calibrate", opt->calibrate,
                "A/A mode: BASE and NEW are two runs of the same build; report the spread between them and "
                "suggest --time-threshold / --memory-threshold (exit 0)");
  sub->add_option("--pair-by", opt->pair_by,
                  "Pair rows by these fields, comma-separated, block and variant always among them (default "
                  "block,point,variant): a field left out may differ, e.g. --pair-by block,variant,point diffs a "
                  "channels-first run against a channels-last one");
  sub->add_flag("--interleave", opt->interleave,
                "BASE and NEW are specs: measure both here, in rounds that alternate which runs first, and judge "
                "each row's time over the rounds (a verdict on a shared runner, where separate runs are disturbed)");
  sub->add_option("--rounds", opt->interleaved.rounds, "With --interleave: how many rounds")
      ->check(CLI::Range(2, kMaxInterleavedRounds))
      ->capture_default_str();
  add_measurement_options(*sub, opt->interleaved.compare, opt->memory_limit);
  return {sub, [opt] {
            if (!opt->pair_by.empty()) {
              const std::vector<std::string> fields = comma_list(opt->pair_by, "--pair-by", "field");
              try {
                check_pairing_fields(fields);
              } catch (const std::invalid_argument& e) {
                throw InputError({"command line", 0, 0}, "--pair-by", e.what());
              }
              opt->diff.pair_by = fields;
            }
            const std::vector<std::string> inputs = {opt->base, opt->next};
            check_output_paths({{opt->markdown, "--markdown"}}, inputs);
            if (opt->interleave) {
              if (opt->calibrate)
                throw InputError({"command line", 0, 0}, "--calibrate",
                                 "is for two results files; --interleave measures two specs");
              if (opt->diff.pair_by != default_pairing_fields())
                throw InputError({"command line", 0, 0}, "--pair-by",
                                 "--interleave pairs rows by block, point and variant");
              opt->interleaved.compare.backend.memory_limit_bytes =
                  parse_byte_size(opt->memory_limit, "--memory-limit");
              const Spec base_spec = load_spec_file(opt->base);
              const Spec new_spec = load_spec_file(opt->next);
              const InterleavedRuns runs = measure_interleaved(base_spec, new_spec, opt->interleaved, std::cerr);
              const DiffReport report = interleaved_report(runs.base, runs.next, opt->diff, opt->base, opt->next);
              write_output_files({{{opt->markdown, "--markdown"}, format_diff(report, TableStyle::markdown)}}, inputs);
              if (opt->markdown != "-") std::cout << format_diff(report, TableStyle::terminal);
              return report.exit_code();
            }
            const ResultSet base = load_results_file(opt->base);
            const ResultSet next = load_results_file(opt->next);
            if (opt->calibrate) {
              const Calibration c = calibrate(base, next, opt->diff, opt->base, opt->next);
              write_output_files({{{opt->markdown, "--markdown"}, format_calibration(c)}}, inputs);
              if (opt->markdown != "-") std::cout << format_calibration(c);
              return 0;
            }
            const DiffReport report = diff_results(base, next, opt->diff, opt->base, opt->next);
            write_output_files({{{opt->markdown, "--markdown"}, format_diff(report, TableStyle::markdown)}}, inputs);
            if (opt->markdown != "-") std::cout << format_diff(report, TableStyle::terminal);
            return report.exit_code();
          }};
}

}  // namespace convbench::cli

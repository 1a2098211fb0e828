// convbench compare SPEC: the flags of the compare pipeline (pipeline/compare.hpp), which builds
// every variant on a backend, runs it forward and backward, and measures time and memory.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "explain/explanation_output.hpp"
#include "history/history_db.hpp"
#include "history/history_file.hpp"
#include "history/history_store.hpp"
#include "measurement_options.hpp"
#include "option_checks.hpp"
#include "output_options.hpp"
#include "peer_options.hpp"
#include "pipeline/compare.hpp"
#include "pipeline/device_limits_choice.hpp"
#include "pipeline/explain.hpp"
#include "pipeline/shard_run.hpp"
#include "report/report_formats.hpp"
#include "spec/spec_filter.hpp"
#include "spec/spec_loader.hpp"
#include "util/caught_signals.hpp"
#include "util/input_error.hpp"

namespace convbench::cli {
namespace {

// compare --db: the run goes into the history as `history add` of its --json would put it.
void add_to_history(const std::string& db, const ResultSet& results) {
  if (db.empty()) return;
  AddSummary s;
  try {
    s = add_runs(db, {history_run_from_results(results, "compare --db")});
  } catch (const HistoryDbError& e) {
    throw HistoryDbError(std::string(e.what()) +
                         " (the run's outputs were written: a --json file can be added later with `convbench "
                         "history add`)");
  }
  std::cerr << "added " << s.measurements << " measurement(s) (" << s.new_series << " new series) to "
            << history_display_name(db) << "\n";
}

// The limits the roofline can be drawn against without measuring anything more than the user
// asked for (pipeline/device_limits_choice.hpp); the flags that name limits are recorded by
// write_results. Why there are none is said only when a roofline is drawn (--html, --plots, an
// HTML standard output).
void record_roofline_limits(const OutputOptions& o, ResultSet& results) {
  if ((o.peak_flops > 0 && o.bandwidth > 0) || !o.limits_device.empty()) return;
  bool roofline = !o.plots.empty();
  for (const OutputFormat& f : output_formats())
    roofline = roofline || (f.draws_roofline && (!o.file(f.name).empty() || o.format == f.name));
  std::ostringstream unsaid;
  record_known_device_limits(results, LimitsRequest{}, roofline ? std::cerr : unsaid);
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  struct Options {
    std::string spec;
    OutputOptions output;
    CompareOptions compare;
    std::string memory_limit = "0";
    SpecLimits limits;
    std::string filter;
    bool explain = false;
    std::string shard, plan;
    std::string db;  // --db: add the run to this results history
    PeerCliOptions peer;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("compare", "Run every variant forward and backward and compare time and memory");
  sub->add_option("spec", opt->spec,
                  "Block spec file (.yaml, .yml or .json; - reads standard input), or an ONNX model file (.onnx)")
      ->required();
  add_measurement_options(*sub, opt->compare, opt->memory_limit);
  add_output_options(*sub, opt->output);
  add_spec_limit_option(*sub, opt->limits);
  sub->add_option("--filter", opt->filter,
                  "Run only the variants whose \"block/variant\" matches this regular expression (each block's "
                  "baseline stays, for the ratios)");
  sub->add_flag(
      "--explain", opt->explain,
      "After the tables, say why each variant is faster or slower, leaner or fatter than the baseline "
      "(as `convbench explain`; turns on --per-op 10 unless given; the device's limits as explain finds them)");
  sub->add_option(
      "--shard", opt->shard,
      "Run only shard I of N of the spec's plan (I/N, counted from 0; /N takes I from SLURM_ARRAY_TASK_ID or "
      "JOB_COMPLETION_INDEX), balanced by estimated cost; --json names the shard's results file, rewritten "
      "after each item, and a rerun skips the items it already holds");
  sub->add_option("--plan", opt->plan,
                  "With --shard: the plan (convbench plan) the shard belongs to; refused when it "
                  "is not this spec's");
  sub->add_option("--db", opt->db,
                  "Also add the run to this results history (an SQLite file or a postgresql:// URI; see "
                  "`convbench history`), after the outputs");
  add_peer_options(*sub, opt->peer, opt->output);
  return {sub, [opt, sub] {
            opt->output.colour = colour_for(*sub, stdout);
            if (!opt->plan.empty() && opt->shard.empty())
              throw InputError({"command line", 0, 0}, "--plan", "is for a shard: give --shard I/N too");
            // `--shard ""` (an unset variable in a job script) must not run the whole spec.
            if (sub->count("--shard") > 0 && opt->shard.empty())
              throw InputError({"command line", 0, 0}, "--shard",
                               "is empty: give I/N, or /N with SLURM_ARRAY_TASK_ID "
                               "or JOB_COMPLETION_INDEX set");
            std::optional<ShardIndex> shard;
            if (!opt->shard.empty()) {
              shard = parse_shard(opt->shard, [](const char* name) { return std::getenv(name); });
              if (opt->output.file("json").empty() || opt->output.file("json") == "-")
                throw InputError({"command line", 0, 0}, "--shard",
                                 "needs --json FILE: the shard's results file, which merge reads");
              if (opt->explain)
                throw InputError({"command line", 0, 0}, "--explain", "explains a whole run, not a shard");
              if (!opt->db.empty())
                throw InputError({"command line", 0, 0}, "--db",
                                 "a shard holds part of a run: add the merged results with `convbench history add`");
            }
            // The history is an input too: an output onto it (--json h.sqlite --db ./h.sqlite, or
            // through a file: URI) would replace every run in it with this one.
            std::vector<std::string> inputs{opt->spec, opt->plan};
            if (!opt->db.empty())
              for (const std::string& f : history_input_files(opt->db)) inputs.push_back(f);
            check_result_paths(opt->output, inputs);
            opt->compare.backend.memory_limit_bytes = parse_byte_size(opt->memory_limit, "--memory-limit");
            if (!opt->db.empty()) check_history_addable(opt->db);  // before the run, not after it
            // A variant whose file cannot be read is a row of its own (status unreadable) and the
            // others run; a shard's plan and an explanation need every variant read.
            SpecLimits limits = opt->limits;
            limits.keep_unreadable = !shard && !opt->explain;
            Spec spec = load_spec_file(opt->spec, limits);
            if (!opt->filter.empty()) filter_spec(spec, opt->filter);
            // Before any measurement: a missing peer environment costs nothing but the error.
            const PeerProgram peer =
                check_peer_options(opt->peer, opt->compare, opt->output, shard.has_value(), opt->explain);
            if (!opt->peer.peer.empty())
              return run_beside_peer(spec, opt->compare, peer, opt->output, inputs,
                                     [&](const ResultSet& results) { add_to_history(opt->db, results); });
            if (shard) {
              ShardRunOptions run{*shard, opt->output.file("json"), opt->plan, {opt->spec, opt->plan}};
              const ResultSet rows = compare_shard(spec, opt->compare, run, std::cerr);
              OutputOptions others = opt->output;  // the shard file is written; the other outputs as usual
              others.files.erase("json");
              write_results(others, rows, inputs);
              return 0;
            }
            if (!opt->explain) {
              CompareOptions options = opt->compare;
              options.stop_on_signal = true;  // what finished before a Ctrl-C or kill is kept
              ResultSet results = compare(spec, options, std::cerr);
              record_roofline_limits(opt->output, results);
              write_results(opt->output, results, inputs);
              if (const auto interrupted = interruption_of(results)) {
                std::cerr << "convbench: " << interruption_text(*interrupted)
                          << ": the rows that finished were written, marked as an interrupted run"
                          << (opt->db.empty() ? "" : "; nothing was added to the history (it keeps whole runs)")
                          << "\n";
                const int signo = signal_number(interrupted->signal);
                raise_with_default_action(signo != 0 ? signo : SIGINT);
                return 128 + SIGINT;  // where the signal's default action does not end the process
              }
              add_to_history(opt->db, results);
              return 0;
            }
            // The explanation follows the terminal tables on standard output, so it needs them there.
            const OutputOptions& o = opt->output;
            for (const auto& [format, path] : o.files)
              if (path == "-")
                throw InputError({"command line", 0, 0}, "--explain",
                                 "the explanation follows the terminal tables on standard output, which an output "
                                 "named - takes; name a file for it");
            if (opt->output.format != "table")
              throw InputError({"command line", 0, 0}, "--explain",
                               "the explanation follows the terminal tables; with --format " + opt->output.format +
                                   " use `convbench explain --format md|html|json` instead");
            ExplainOptions options;
            options.compare = opt->compare;
            options.limits.peak_flops = opt->output.peak_flops;
            options.limits.bandwidth = opt->output.bandwidth;
            options.limits.device_name = opt->output.limits_device;
            const ExplainRun run = explain(spec, options, std::cerr);
            write_results(opt->output, run.results, inputs);
            add_to_history(opt->db, run.results);
            std::cout << "\n" << explanation_text(run.explanation);
            return 0;
          }};
}

}  // namespace convbench::cli

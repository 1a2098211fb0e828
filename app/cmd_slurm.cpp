// convbench slurm SPEC --shards N [-- COMPARE FLAGS]: the spec's plan as a Slurm job array and a
// merge job that waits for it (sweep/slurm_sweep.hpp). Rerun in the same --dir, it submits only
// the shards whose results are missing or incomplete.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "measurement_options.hpp"
#include "option_checks.hpp"
#include "pipeline/shard_run.hpp"
#include "spec/spec_loader.hpp"
#include "sweep/slurm_sweep.hpp"
#include "this_program.hpp"
#include "util/input_error.hpp"

namespace convbench::cli {
namespace {

// The flags for the shards are compare's measurement flags and nothing else (each shard writes
// its own results file): parsed here, so a typo fails now, not in every job.
void check_compare_args(const std::vector<std::string>& args) {
  CLI::App probe{"compare flags"};
  CompareOptions ignored;
  std::string memory_limit = "0";
  add_measurement_options(probe, ignored, memory_limit);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    probe.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw InputError({"command line", 0, 0}, "--",
                     std::string("the flags after -- go to every shard's `convbench compare` and must be its "
                                 "measurement flags (--device, --min-time, --threads, ...): ") +
                         e.what());
  }
  parse_byte_size(memory_limit, "--memory-limit");
}

}  // namespace

Command add_slurm_command(CLI::App& app) {
  struct Options {
    std::string spec, dir = "convbench-sweep";
    int shards = 0;
    SlurmJobSettings settings;
    bool dry_run = false;
    SpecLimits limits;
    std::vector<std::string> compare_args;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "slurm",
      "Run a spec as a Slurm job array of N shards and a merge job after it (sbatch); rerun to submit only "
      "the shards still missing");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json), or an ONNX model file (.onnx)")
      ->required();
  sub->add_option("compare_flags", opt->compare_args,
                  "After --: flags for every shard's `convbench compare` (e.g. -- --device cuda --min-time 1)");
  sub->add_option("--shards", opt->shards, "Number of shards N (the job array's tasks 0..N-1)")
      ->required()
      ->check(CLI::Range(1, kMaxShards));
  sub->add_option("--dir", opt->dir,
                  "Folder for the plan, the scripts, the shard results, the logs and the merged results.json (on a "
                  "file system the nodes share)")
      ->capture_default_str();
  sub->add_option("--partition", opt->settings.partition, "sbatch --partition");
  sub->add_option("--gres", opt->settings.gres, "sbatch --gres for each shard, e.g. gpu:1");
  sub->add_option("--time", opt->settings.time, "sbatch --time for each job, e.g. 02:00:00");
  sub->add_flag("--dry-run", opt->dry_run, "Print the two batch scripts; write and submit nothing");
  add_spec_limit_option(*sub, opt->limits);
  return {sub, [opt] {
            if (opt->spec == "-")
              throw InputError({"command line", 0, 0}, "SPEC",
                               "the jobs read the spec again, so it must be a file, not standard input");
            check_compare_args(opt->compare_args);
            const Spec spec = load_spec_file(opt->spec, opt->limits);
            const Plan plan = plan_of(spec);
            SlurmSweepOptions o;
            o.files.convbench = this_program();  // the jobs run this very binary
            o.files.spec = std::filesystem::absolute(opt->spec).lexically_normal().string();
            o.files.dir = std::filesystem::absolute(opt->dir).lexically_normal().string();
            while (o.files.dir.size() > 1 && o.files.dir.back() == '/') o.files.dir.pop_back();
            o.shards = opt->shards;
            o.settings = opt->settings;
            // The shards must expand the spec exactly as here, or their plan would be another.
            if (opt->limits.max_runs != kDefaultMaxRuns)
              o.compare_args = {"--max-runs", std::to_string(opt->limits.max_runs)};
            if (opt->limits.max_network_ops != kDefaultMaxNetworkOps)
              o.compare_args.insert(o.compare_args.end(),
                                    {"--max-network-ops", std::to_string(opt->limits.max_network_ops)});
            if (!opt->limits.model_input.empty())  // a model file's shape, as given here
              o.compare_args.insert(o.compare_args.end(), {"--input", opt->limits.model_input});
            for (const auto& [field, values] : opt->limits.sweep_overrides)
              o.compare_args.insert(o.compare_args.end(), {"--sweep", field + "=" + values});
            o.compare_args.insert(o.compare_args.end(), opt->compare_args.begin(), opt->compare_args.end());
            o.dry_run = opt->dry_run;
            return run_slurm_sweep(plan, o, std::cout);
          }};
}

}  // namespace convbench::cli

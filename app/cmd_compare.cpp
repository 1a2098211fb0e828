// convbench compare SPEC: the flags of the compare pipeline (pipeline/compare.hpp), which builds
// every variant on a backend, runs it forward and backward, and measures time and memory.
#include <iostream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "output_options.hpp"
#include "pipeline/compare.hpp"
#include "spec/spec_filter.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::cli {
Command add_compare_command(CLI::App& app) {
  struct Options {
    std::string spec;
    OutputOptions output;
    CompareOptions compare;
    std::string memory_limit = "0";
    SpecLimits limits;
    std::string filter;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("compare", "Run every variant forward and backward and compare time and memory");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json; - reads standard input)")->required();
  sub->add_option("--device", opt->compare.device,
                  "auto | cpu | reference | cuda (auto: cuda when a GPU is usable, else cpu)")
      ->capture_default_str();
  add_output_options(*sub, opt->output);
  sub->add_option("--max-noise", opt->compare.run.measure.max_noise, "Stop sampling when stdev/mean is at most this")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  sub->add_option("--min-time", opt->compare.run.measure.min_time_s, "Measure at least this many seconds per phase")
      ->check(finite_in(0, 86400))
      ->capture_default_str();
  sub->add_option("--min-samples", opt->compare.run.measure.min_samples, "Take at least this many samples per phase")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  sub->add_option("--timeout", opt->compare.run.measure.timeout_s,
                  "Give up on the noise target after this many seconds per phase")
      ->check(finite_in(0, 86400))
      ->capture_default_str();
  sub->add_option("--seed", opt->compare.run.seed, "Seed for inputs and weights (0 to 2^63-1)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{INT64_MAX}))
      ->capture_default_str();
  sub->add_flag(
      "--memory-only", [opt](int64_t) { opt->compare.run.time = false; }, "Measure memory only, no timing");
  sub->add_option("--per-op", opt->compare.run.per_op_steps,
                  "Also time every op (median over this many extra steps, the device synchronised around each op); "
                  "written to the JSON rows as op_times")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  sub->add_flag("--cold", opt->compare.run.cold,
                "Cold-cache timing: evict the caches before every sample (the GPU's L2 on cuda, the CPU's "
                "last-level cache on cpu and reference)");
  sub->add_flag("--graph", opt->compare.run.graph,
                "Also time the step (train) or forward pass (infer) recorded once as a CUDA graph and replayed: "
                "the kernels without the host's launch gaps, next to the eager time (cuda only)");
  sub->add_option("--cudnn-algo", opt->compare.backend.cudnn_algo,
                  "cuda: heuristic (cuDNN's first choice that fits) or find (time the candidates once per shape, "
                  "before measuring)")
      ->check(CLI::IsMember({"heuristic", "find"}))
      ->capture_default_str();
  sub->add_option("--memory-limit", opt->memory_limit,
                  "Fail (status oom) any variant needing more than this many bytes at once, e.g. 16GiB: emulates "
                  "a device with less memory")
      ->capture_default_str();
  sub->add_option("--threads", opt->compare.backend.threads,
                  "Threads of the cpu and reference backends (default: OpenMP's, one per allowed CPU); the run's "
                  "threads and CPU affinity are recorded in the provenance")
      ->check(CLI::Range(1, 4096));
  sub->add_flag("-q,--quiet", opt->compare.quiet, "No progress messages on stderr");
  add_spec_limit_option(*sub, opt->limits);
  sub->add_option("--filter", opt->filter,
                  "Run only the variants whose \"block/variant\" matches this regular expression (each block's "
                  "baseline stays, for the ratios)");
  return {sub, [opt, sub] {
            opt->output.colour = colour_for(*sub, stdout);
            check_result_paths(opt->output, {opt->spec});
            opt->compare.backend.memory_limit_bytes = parse_byte_size(opt->memory_limit, "--memory-limit");
            Spec spec = load_spec_file(opt->spec, opt->limits);
            if (!opt->filter.empty()) filter_spec(spec, opt->filter);
            const ResultSet results = compare(spec, opt->compare, std::cerr);
            write_results(opt->output, results, {opt->spec});
            return 0;
          }};
}

}  // namespace convbench::cli

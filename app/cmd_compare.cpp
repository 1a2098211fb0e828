// convbench compare SPEC: builds every variant on a backend, runs it forward and backward, and
// prints measured time and memory next to the analysis.
#include <iostream>

#include "backends/backend_registry.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "graph/variant_builder.hpp"
#include "measure/progress.hpp"
#include "measure/provenance.hpp"
#include "measure/variant_runner.hpp"
#include "output_options.hpp"
#include "report/analysis_rows.hpp"
#include "report/markup_escape.hpp"
#include "report/run_warnings.hpp"
#include "spec/spec_loader.hpp"

#include <spdlog/spdlog.h>

namespace convbench::cli {
Command add_compare_command(CLI::App& app) {
  struct Options {
    std::string spec, device = "auto";
    OutputOptions output;
    RunOptions run;
    BackendOptions backend;
    std::string memory_limit = "0";
    bool quiet = false;
    SpecLimits limits;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("compare", "Run every variant forward and backward and compare time and memory");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json; - reads standard input)")->required();
  sub->add_option("--device", opt->device, "auto | cpu | reference | cuda (auto: cuda when a GPU is usable, else cpu)")
      ->capture_default_str();
  add_output_options(*sub, opt->output);
  sub->add_option("--max-noise", opt->run.measure.max_noise, "Stop sampling when stdev/mean is at most this")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  sub->add_option("--min-time", opt->run.measure.min_time_s, "Measure at least this many seconds per phase")
      ->check(finite_in(0, 86400))
      ->capture_default_str();
  sub->add_option("--min-samples", opt->run.measure.min_samples, "Take at least this many samples per phase")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  sub->add_option("--timeout", opt->run.measure.timeout_s, "Give up on the noise target after this many seconds per phase")
      ->check(finite_in(0, 86400))
      ->capture_default_str();
  sub->add_option("--seed", opt->run.seed, "Seed for inputs and weights (0 to 2^63-1)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{INT64_MAX}))
      ->capture_default_str();
  sub->add_flag("--memory-only", [opt](int64_t) { opt->run.time = false; }, "Measure memory only, no timing");
  sub->add_option("--per-op", opt->run.per_op_steps,
                  "Also time every op (median over this many extra steps, the device synchronised around each op); "
                  "written to the JSON rows as op_times")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  sub->add_flag("--cold", opt->run.cold,
                "Cold-cache timing: evict the caches before every sample (the GPU's L2 on cuda, the CPU's "
                "last-level cache on cpu and reference)");
  sub->add_flag("--graph", opt->run.graph,
                "Also time the step (train) or forward pass (infer) recorded once as a CUDA graph and replayed: "
                "the kernels without the host's launch gaps, next to the eager time (cuda only)");
  sub->add_option("--cudnn-algo", opt->backend.cudnn_algo,
                  "cuda: heuristic (cuDNN's first choice that fits) or find (time the candidates once per shape, "
                  "before measuring)")
      ->check(CLI::IsMember({"heuristic", "find"}))
      ->capture_default_str();
  sub->add_option("--memory-limit", opt->memory_limit,
                  "Fail (status oom) any variant needing more than this many bytes at once, e.g. 16GiB: emulates "
                  "a device with less memory")
      ->capture_default_str();
  sub->add_flag("-q,--quiet", opt->quiet, "No progress messages on stderr");
  add_spec_limit_option(*sub, opt->limits);
  return {sub, [opt] {
            check_result_paths(opt->output, {opt->spec});
            opt->backend.memory_limit_bytes = parse_byte_size(opt->memory_limit, "--memory-limit");
            const Spec spec = load_spec_file(opt->spec, opt->limits);
            ResultSet results = analyze_spec(spec);  // validates everything before any run
            DeviceChoice choice;
            try {
              choice = choose_device(opt->device);
            } catch (const std::invalid_argument& e) {
              throw SpecError({"command line", 0, 0}, "--device", e.what());
            }
            if (!choice.reason.empty()) std::cerr << "convbench: " << choice.reason << "\n";
            std::unique_ptr<Backend> backend = make_backend(choice.device, opt->backend);
            if (opt->run.graph && opt->run.time)
              if (const auto why = backend->replay_unsupported()) throw SpecError({"command line", 0, 0}, "--graph", *why);
            Progress progress(static_cast<int>(results.rows.size()), opt->quiet);
            size_t i = 0;
            for (const BlockSpec& block : spec.blocks) {
              for (const VariantSpec& v : block.variants) {
                ResultRow& row = results.rows[i];
                progress.start(static_cast<int>(i++),
                               printable(row.block + (row.point_label.empty() ? "" : " [" + row.point_label + "]") +
                                         " / " + row.variant + " on " + backend->name()));
                spdlog::info("{} / {} [{}] on {}", printable(row.block), printable(row.variant),
                             printable(row.point_label), backend->name());
                const Graph g = build_variant_graph(block, v);
                const bool training = block.mode == RunMode::train;
                // The prediction includes this backend's workspace, so it is comparable byte for byte.
                bool supported = true;
                for (const Op& op : g.ops) supported = supported && !backend->unsupported(g, op);
                if (supported) {
                  try {
                    row.predicted = figures_from(predict_memory(
                        g, training, [&](const Op& op, Phase ph) { return backend->workspace_bytes(g, op, ph, training); }));
                  } catch (const std::exception&) {
                    // keep the backend-independent prediction; the run reports the failure
                  }
                }
                run_variant(g, training, *backend, opt->run, row);
                if (row.status != "ok")
                  spdlog::warn("{} / {}: {}: {}", printable(row.block), printable(row.variant), row.status,
                               printable(row.message));
                for (const std::string& w : row_warnings(row)) spdlog::warn("{}", printable(w));
              }
            }
            results.engine = engine_name();
            results.device = backend->name();
            results.provenance = collect_provenance(spec, backend.get());
            if (const nlohmann::json clocks = clock_provenance(results.rows); !clocks.is_null())
              results.provenance["clock"] = clocks;
            write_results(opt->output, results, {opt->spec});
            return 0;
          }};
}

}  // namespace convbench::cli

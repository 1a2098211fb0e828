// convbench compare SPEC: builds every variant on a backend, runs it forward and backward, and
// prints measured time and memory next to the analysis.
#include <iostream>

#include "backends/backend_registry.hpp"
#include "commands.hpp"
#include "graph/variant_builder.hpp"
#include "measure/provenance.hpp"
#include "measure/variant_runner.hpp"
#include "output_options.hpp"
#include "report/analysis_rows.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::cli {

Command add_compare_command(CLI::App& app) {
  struct Options {
    std::string spec, device = "auto";
    OutputOptions output;
    RunOptions run;
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("compare", "Run every variant forward and backward and compare time and memory");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json)")->required();
  sub->add_option("--device", opt->device, "auto | cpu | reference | cuda (auto: cuda when a GPU is usable, else cpu)")
      ->capture_default_str();
  add_output_options(*sub, opt->output);
  sub->add_option("--max-noise", opt->run.measure.max_noise, "Stop sampling when stdev/mean is at most this")
      ->capture_default_str();
  sub->add_option("--min-time", opt->run.measure.min_time_s, "Measure at least this many seconds per phase")
      ->capture_default_str();
  sub->add_option("--min-samples", opt->run.measure.min_samples, "Take at least this many samples per phase")
      ->capture_default_str();
  sub->add_option("--timeout", opt->run.measure.timeout_s, "Give up on the noise target after this many seconds per phase")
      ->capture_default_str();
  sub->add_option("--seed", opt->run.seed, "Seed for inputs and weights")->capture_default_str();
  sub->add_flag("--memory-only", [opt](int64_t) { opt->run.time = false; }, "Measure memory only, no timing");
  sub->add_flag("-q,--quiet", opt->quiet, "No progress messages on stderr");
  return {sub, [opt] {
            const Spec spec = load_spec_file(opt->spec);
            ResultSet results = analyze_spec(spec);  // validates everything before any run
            DeviceChoice choice;
            try {
              choice = choose_device(opt->device);
            } catch (const std::invalid_argument& e) {
              throw SpecError({"command line", 0, 0}, "--device", e.what());
            }
            if (!choice.reason.empty()) std::cerr << "convbench: " << choice.reason << "\n";
            std::unique_ptr<Backend> backend = make_backend(choice.device);
            size_t i = 0;
            for (const BlockSpec& block : spec.blocks) {
              for (const VariantSpec& v : block.variants) {
                ResultRow& row = results.rows[i++];
                if (!opt->quiet)
                  std::cerr << "[" << i << "/" << results.rows.size() << "] " << row.block
                            << (row.point_label.empty() ? "" : " [" + row.point_label + "]") << " / " << row.variant
                            << " on " << backend->name() << "\n";
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
              }
            }
            results.engine = engine_name();
            results.device = backend->name();
            results.provenance = collect_provenance(opt->spec, backend.get());
            write_output_files(opt->output, results);
            print_tables(results);
            return 0;
          }};
}

}  // namespace convbench::cli

// convbench analyze SPEC: counts and predicted memory of every variant, without running anything.
#include <iostream>

#include "backends/backend_registry.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_options.hpp"
#include "pipeline/analyze.hpp"
#include "spec/spec_filter.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::cli {

Command add_analyze_command(CLI::App& app) {
  struct Options {
    std::string spec;
    OutputOptions output;
    SpecLimits limits;
    std::string filter;
    std::string device;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("analyze", "Parameters, FLOPs, bytes and predicted memory of every variant (nothing is run)");
  sub->add_option("spec", opt->spec,
                  "Block spec file (.yaml, .yml or .json; - reads standard input), or an ONNX model file (.onnx)")
      ->required();
  std::string devices;
  for (const std::string& name : device_names()) devices += (devices.empty() ? "" : " | ") + name;
  sub->add_option("--device", opt->device,
                  "Include this backend's workspace in the predicted peaks (" + devices +
                      "; cuda needs a GPU), so they equal what compare on it predicts; without it, no backend's "
                      "workspace is counted")
      ->check(CLI::IsMember(device_names()));
  add_output_options(*sub, opt->output);
  add_spec_limit_option(*sub, opt->limits);
  sub->add_option("--filter", opt->filter,
                  "Run only the variants whose \"block/variant\" matches this regular expression (each block's "
                  "baseline stays, for the ratios)");
  return {sub, [opt, sub] {
            opt->output.colour = colour_for(*sub, stdout);
            check_result_paths(opt->output, {opt->spec});
            SpecLimits limits = opt->limits;
            limits.keep_unreadable = true;  // a variant whose file cannot be read: a row of its own
            Spec spec = load_spec_file(opt->spec, limits);
            if (!opt->filter.empty()) filter_spec(spec, opt->filter);
            write_results(opt->output, analyze(spec, opt->device), {opt->spec});
            return 0;
          }};
}

}  // namespace convbench::cli

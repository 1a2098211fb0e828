// convbench export SPEC --onnx DIR: the flags of the export pipeline (pipeline/export_onnx.hpp):
// every variant of the spec as an ONNX model with the weights a run starts from.
#include <iostream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "pipeline/export_onnx.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::cli {

Command add_export_command(CLI::App& app) {
  struct Options {
    std::string spec;
    ExportOptions exporting;
    SpecLimits limits;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "export",
      "Write every variant of a spec as an ONNX model (DIR/<block>/<variant>.onnx: opset 17, the inference "
      "forward, convbench's starting weights as initializers), to run in ONNX Runtime or any ONNX tool");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json; - reads standard input)")->required();
  sub->add_option("--onnx", opt->exporting.dir,
                  "Folder to write the models in (created when its parent exists); nothing is written when any "
                  "variant cannot be exported")
      ->required();
  sub->add_option("--seed", opt->exporting.seed,
                  "Seed of the weights (compare's --seed: the weights a run with it starts from; 0 to 2^63-1)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{INT64_MAX}))
      ->capture_default_str();
  add_spec_limit_option(*sub, opt->limits);
  return {sub, [opt] {
            const Spec spec = load_spec_file(opt->spec, opt->limits);
            std::cout << format_export(export_onnx(spec, opt->spec, opt->exporting), opt->exporting);
            return 0;
          }};
}

}  // namespace convbench::cli

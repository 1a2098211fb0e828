// convbench validate SPEC: checks a spec completely (every variant graph built and counted), and
// with --resolved-json writes the resolved spec the PyTorch peer builds its modules from.
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "pipeline/analyze.hpp"
#include "spec/spec_loader.hpp"
#include "util/json_text.hpp"
#include "util/output_writer.hpp"
#include "variants/resolved_spec.hpp"

namespace convbench::cli {

Command add_validate_command(CLI::App& app) {
  struct Options {
    std::string spec, resolved_json;
    SpecLimits limits;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("validate", "Check a spec file; exit 0 when valid, 2 with a located message when not");
  sub->add_option("spec", opt->spec,
                  "Block spec file (.yaml, .yml or .json; - reads standard input), or an ONNX model file (.onnx)")
      ->required();
  sub->add_option("--resolved-json", opt->resolved_json,
                  "Also write the resolved spec (every block at every sweep point, every variant and custom op with "
                  "all defaults applied) as JSON: what scripts/torch_peer.py builds its modules from");
  add_spec_limit_option(*sub, opt->limits);
  return {sub, [opt] {
            const std::vector<OutputPath> outputs = {{opt->resolved_json, "--resolved-json"}};
            check_output_paths(outputs, {opt->spec});
            const Spec spec = load_spec_file(opt->spec, opt->limits);
            const ResultSet rows = analyze_spec(spec);  // builds and counts every variant
            if (!opt->resolved_json.empty())
              write_output_files({{outputs[0], json_text(resolved_spec_json(spec), 1) + "\n"}}, {opt->spec});
            if (opt->resolved_json != "-") {
              const auto networks = std::count_if(spec.blocks.begin(), spec.blocks.end(),
                                                  [](const BlockSpec& b) { return b.network != nullptr; });
              const auto blocks = static_cast<std::ptrdiff_t>(spec.blocks.size()) - networks;
              std::cout << spec.file << ": ok (" << blocks << " block points, ";
              if (networks) std::cout << networks << " network points, ";
              std::cout << rows.rows.size() << " variant runs)\n";
            }
            return 0;
          }};
}

}  // namespace convbench::cli

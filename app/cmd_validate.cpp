// convbench validate SPEC: checks a spec completely (every variant graph built and counted).
#include <iostream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "pipeline/analyze.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::cli {

Command add_validate_command(CLI::App& app) {
  struct Options {
    std::string spec;
    SpecLimits limits;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("validate", "Check a spec file; exit 0 when valid, 2 with a located message when not");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json; - reads standard input)")->required();
  add_spec_limit_option(*sub, opt->limits);
  return {sub, [opt] {
            const Spec spec = load_spec_file(opt->spec, opt->limits);
            const ResultSet rows = analyze_spec(spec);  // builds and counts every variant
            std::cout << spec.file << ": ok (" << spec.blocks.size() << " block points, " << rows.rows.size()
                      << " variant runs)\n";
            return 0;
          }};
}

}  // namespace convbench::cli

// convbench analyze SPEC: counts and predicted memory of every variant, without running anything.
#include <iostream>

#include "commands.hpp"
#include "output_options.hpp"
#include "report/analysis_rows.hpp"
#include "spec/spec_loader.hpp"
#include "measure/provenance.hpp"

namespace convbench::cli {

Command add_analyze_command(CLI::App& app) {
  struct Options {
    std::string spec;
    OutputOptions output;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("analyze", "Parameters, FLOPs, bytes and predicted memory of every variant (nothing is run)");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json)")->required();
  add_output_options(*sub, opt->output);
  return {sub, [opt] {
            const Spec spec = load_spec_file(opt->spec);
            ResultSet results = analyze_spec(spec);
            results.engine = engine_name();
            results.provenance = collect_provenance(opt->spec, nullptr);
            write_output_files(opt->output, results);
            print_tables(results);
            return 0;
          }};
}

}  // namespace convbench::cli

// convbench analyze SPEC: counts and predicted memory of every variant, without running anything.
#include <iostream>

#include "commands.hpp"
#include "output_files.hpp"
#include "report/analysis_rows.hpp"
#include "report/json_results.hpp"
#include "report/summary_tables.hpp"
#include "spec/spec_loader.hpp"
#include "measure/provenance.hpp"

namespace convbench::cli {

Command add_analyze_command(CLI::App& app) {
  struct Options {
    std::string spec, json, csv, markdown;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("analyze", "Parameters, FLOPs, bytes and predicted memory of every variant (nothing is run)");
  sub->add_option("spec", opt->spec, "Block spec file (.yaml, .yml or .json)")->required();
  sub->add_option("--json", opt->json, "Write results JSON to this file");
  sub->add_option("--csv", opt->csv, "Write a tidy CSV (one row per block x variant x point)");
  sub->add_option("--markdown", opt->markdown, "Write Markdown tables");
  return {sub, [opt] {
            const Spec spec = load_spec_file(opt->spec);
            ResultSet results = analyze_spec(spec);
            results.engine = engine_name();
            results.provenance = collect_provenance(opt->spec, nullptr);
            PendingOutputs out;
            if (!opt->json.empty()) out.add(opt->json, results_to_json(results).dump(2) + "\n");
            if (!opt->csv.empty()) out.add(opt->csv, format_csv(results));
            if (!opt->markdown.empty()) out.add(opt->markdown, format_tables(results, TableStyle::markdown));
            out.write_all();
            std::cout << format_tables(results, TableStyle::terminal);
            return 0;
          }};
}

}  // namespace convbench::cli

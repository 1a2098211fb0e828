// convbench plan SPEC -o PLAN.json: every work item of a spec with its stable id and estimated
// cost, and the plan's hash (sweep/plan.hpp); --shards N adds each item's shard and prints the
// balance.
#include <iostream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "pipeline/shard_run.hpp"
#include "spec/spec_filter.hpp"
#include "spec/spec_loader.hpp"
#include "util/json_text.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {

Command add_plan_command(CLI::App& app) {
  struct Options {
    std::string spec, output;
    int shards = 0;
    SpecLimits limits;
    std::string filter;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "List a spec's work items (block x sweep point x variant) with stable ids, estimated costs and the plan's "
      "hash, for compare --shard, merge and slurm");
  sub->add_option("spec", opt->spec,
                  "Block spec file (.yaml, .yml or .json; - reads standard input), or an ONNX model file (.onnx)")
      ->required();
  sub->add_option("-o,--output", opt->output, "The plan file (- is standard output)")->required();
  sub->add_option("--shards", opt->shards, "Also give each item's shard of N, balanced by cost, and print the loads")
      ->check(CLI::Range(1, kMaxShards));
  add_spec_limit_option(*sub, opt->limits);
  sub->add_option("--filter", opt->filter,
                  "As compare --filter: plan only the variants whose \"block/variant\" matches");
  return {sub, [opt] {
            check_output_paths({{opt->output, "-o"}}, {opt->spec});
            Spec spec = load_spec_file(opt->spec, opt->limits);
            if (!opt->filter.empty()) filter_spec(spec, opt->filter);
            const Plan plan = plan_of(spec);
            std::vector<int> shard_of;
            if (opt->shards > 0) shard_of = assign_shards(plan, opt->shards);
            write_output_files({{{opt->output, "-o"}, json_text(plan_to_json(plan, shard_of), 2) + "\n"}}, {opt->spec});
            std::cerr << "plan " << plan.hash.substr(0, 12) << ": " << plan.items.size() << " items\n";
            if (opt->shards > 0) {
              const std::vector<double> loads = shard_loads(plan, shard_of, opt->shards);
              for (int s = 0; s < opt->shards; ++s) {
                const auto n = std::count(shard_of.begin(), shard_of.end(), s);
                std::cerr << "  shard " << s << "/" << opt->shards << ": " << n << " items, cost " << loads[s] << "\n";
              }
            }
            return 0;
          }};
}

}  // namespace convbench::cli

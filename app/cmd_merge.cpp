// convbench merge SHARD.json... -o RESULTS.json: the shards of one plan into one results file
// (sweep/merge.hpp); exit 1, after writing what there is, when items are missing or only failed
// (oom, error: the shards `convbench slurm` would rerun).
#include <iostream>

#include "commands.hpp"
#include "sweep/merge.hpp"
#include "util/input_error.hpp"
#include "util/json_text.hpp"
#include "util/markup_escape.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {

Command add_merge_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> shards;
    std::string output;
    bool allow_mixed = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "merge",
      "Merge the results files of a plan's shards (compare --shard) into one results file; exit 1 when items "
      "are missing, naming the shards to rerun");
  sub->add_option("shards", opt->shards, "Shard results files (compare --shard I/N --json FILE)")->required();
  sub->add_option("-o,--output", opt->output, "The merged results file (- is standard output)")->required();
  sub->add_flag("--allow-mixed", opt->allow_mixed,
                "Merge shards that ran on different devices or library versions (the merged file says which rows "
                "ran where)");
  return {sub, [opt] {
            check_output_paths({{opt->output, "-o"}}, opt->shards);
            // A damaged file (truncated, overwritten) is named and skipped: its items are missing,
            // and their shard is named to rerun, instead of one file blocking every good one.
            std::vector<MergeInput> inputs;
            std::vector<std::string> damaged;
            // The plan once, not once per shard: every file of a plan shares one copy, and a plan
            // file that 1,000 shards name is read once.
            ShardPlans plans;
            for (const std::string& path : opt->shards) {
              ShardFileRead read = read_shard_file(path, plans);
              if (!read.file) {
                damaged.push_back(read.damage);
                continue;
              }
              inputs.push_back({path, std::move(*read.file)});
            }
            for (const std::string& why : damaged) std::cerr << "skipped: " << printable(why) << "\n";
            if (inputs.empty())
              throw InputError({opt->shards.front(), 0, 0}, "", "every shard file given is damaged: nothing to merge");
            const MergeOutcome merged = merge_shards(inputs, opt->allow_mixed);
            write_output_files({{{opt->output, "-o"}, json_text(merged_results_json(merged), 2) + "\n"}}, opt->shards);
            std::cerr << "merged " << inputs.size() << " shard files of plan " << merged.plan->hash.substr(0, 12)
                      << ": " << merged.results.rows.size() - merged.unsettled.size() << " of "
                      << merged.plan->items.size() << " items";
            if (opt->output != "-") std::cerr << " -> " << printable(opt->output);
            std::cerr << "\n";
            const std::vector<int> shard_of = assign_shards(*merged.plan, merged.shard_count);
            for (size_t i : merged.missing)
              std::cerr << "missing: " << merged.plan->items[i].id << " " << printable(item_name(merged.plan->items[i]))
                        << " (shard " << shard_of[i] << ")\n";
            // Failed rows are in the file, but not covered: `convbench slurm` reruns their shards.
            for (size_t i : merged.unsettled)
              std::cerr << "unsettled: " << merged.plan->items[i].id << " "
                        << printable(item_name(merged.plan->items[i])) << " (shard " << shard_of[i] << ")\n";
            for (const std::string& note : merged.notes) std::cerr << printable(note) << "\n";
            return merged.missing.empty() && merged.unsettled.empty() && damaged.empty() ? 0 : 1;
          }};
}

}  // namespace convbench::cli

// `compare --shard I/N`: run one shard's share of a spec's plan, saving the shard's results file
// atomically after every item, and skipping the items an earlier attempt already settled, so a
// killed or failed shard loses at most the item it was running and a rerun completes it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "pipeline/compare.hpp"
#include "sweep/plan.hpp"
#include "sweep/shard_assignment.hpp"

namespace convbench {

struct ShardRunOptions {
  ShardIndex shard;
  std::string file;                 // the shard's results file (compare --json)
  std::string plan_file;            // --plan: must be the spec's plan (empty: none given)
  std::vector<std::string> inputs;  // files no output may replace (the spec, the plan)
};

// The spec's plan: analyze_spec's rows give the costs.
Plan plan_of(const Spec& spec);

// Runs the shard; returns its rows (kept and new, in plan order) with this run's provenance,
// for the other outputs. InputError (before anything runs) for a --plan of another spec, or a
// results file of another plan or shard.
ResultSet compare_shard(const Spec& spec, const CompareOptions& options, const ShardRunOptions& shard,
                        std::ostream& notices);

}  // namespace convbench

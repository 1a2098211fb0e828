// `convbench merge`: shard files of one plan into one results file. Refuses (InputError, exit 2,
// nothing written) shards of different plans or shard counts, an item done twice, and shards
// that ran on different devices or library versions unless mixing is allowed; reports what is
// still missing and which shards to rerun.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/shard_file.hpp"

namespace convbench {

struct MergeInput {
  std::string file;  // for messages and for where each row came from
  ShardFile shard;
};

struct MergeOutcome {
  std::shared_ptr<const Plan> plan;
  int shard_count = 0;
  ResultSet results;               // one row per covered item, in plan order
  std::vector<size_t> missing;     // plan items no shard has a row for
  std::vector<size_t> unsettled;   // plan items whose only rows failed (oom, error): in results, and
                                   // rerun as `convbench slurm` would (shard_complete)
  std::vector<int> rerun;          // the shards the missing and unsettled items belong to, ascending
  bool mixed = false;              // the shards ran on different devices or versions (allowed)
  nlohmann::json plan_section;     // the merged file's "plan": hash, counts, missing, sources
  std::vector<std::string> notes;  // for stderr: replaced failures, which rows ran where
};

// What must be the same in every shard for their rows to be one comparison: the backend and the
// device (GPU or CPU model), convbench and its libraries. One line per field, for messages.
std::vector<std::pair<std::string, std::string>> run_signature(const ResultSet& results);

// Among several rows of one item, a settled one (ok, unsupported) wins over a failed one (oom,
// error); of several failed ones the last given wins; two settled rows are a duplicate.
MergeOutcome merge_shards(const std::vector<MergeInput>& inputs, bool allow_mixed);

// The merged results file: convbench.results/1 plus the "plan" section.
nlohmann::json merged_results_json(const MergeOutcome& outcome);

}  // namespace convbench

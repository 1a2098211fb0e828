// A shard's results file: a normal results file (convbench.results/1, which every report reads)
// with a "shard" section: the plan it belongs to (its hash, and the plan file's path or the plan
// itself: shard_plans.hpp), which shard of how many, and the status of each of its items
// ("pending", or the row's status and the row that holds it). compare --shard rewrites it
// atomically after every item, so a killed shard leaves a complete file of what it finished, and
// a rerun continues from it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.hpp"
#include "sweep/plan.hpp"
#include "sweep/shard_assignment.hpp"
#include "sweep/shard_plans.hpp"

namespace convbench {

// /2 names the plan file ("plan_file") or carries the plan ("plan"); /1 always carried it, and
// is still read.
inline constexpr const char* kShardSchema = "convbench.shard/2";
inline constexpr const char* kShardSchemaCarrying = "convbench.shard/1";

struct ShardItem {
  size_t item = 0;            // index into plan.items
  std::optional<size_t> row;  // index into results.rows; nullopt while pending
};

struct ShardFile {
  std::shared_ptr<const Plan> plan;  // shared by every shard file of the plan a command reads
  std::string plan_file;             // the plan file it names, relative to its folder; empty: it carries the plan
  ShardIndex shard;
  ResultSet results;             // the rows of the items done so far, in plan order
  std::vector<ShardItem> items;  // every item assigned to this shard, in plan order
};

// A status a rerun keeps: ok, and unsupported (the backend lacks the op: running it again cannot
// change that). oom and error are retried: another process may have held the memory.
bool settled(RunStatus status);
// Every item of the shard has a row with a settled status.
bool shard_complete(const ShardFile& file);

nlohmann::json shard_file_json(const ShardFile& file);
// Checks everything a merge relies on: the plan's hash (recomputed, and the plan file's when the
// file names one: `plans` reads it), that the items are exactly those assign_shards gives this
// shard, that each done item's row exists, is used once and is the item's block, variant and
// point. InputError located in `file_name` (or in its plan file) otherwise.
ShardFile shard_file_from_json(const nlohmann::json& doc, const std::string& file_name, ShardPlans& plans);
ShardFile load_shard_file(const std::string& path, ShardPlans& plans);

// A shard file as a rerun, merge or slurm reads it back: the file, or why it is damaged (not even
// JSON: truncated, overwritten), so that they recover instead of stopping at it. A readable file
// that is not this kind of shard file still throws, as load_shard_file does.
struct ShardFileRead {
  std::optional<ShardFile> file;
  std::string damage;  // "path:line:column: malformed JSON: ..." when file is empty
};
ShardFileRead read_shard_file(const std::string& path, ShardPlans& plans);

// Renames a damaged shard file to PATH.damaged (or PATH.damaged-2, -3, ...), keeping it for a
// look; returns the new name. Throws InputError when it cannot.
std::string move_damaged_shard_aside(const std::string& path);

}  // namespace convbench

// Which shard runs which plan item, and which shard this process is (`--shard I/N`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sweep/plan.hpp"

namespace convbench {

// More shards than this is a typo, not a sweep (Slurm's default MaxArraySize is 1001).
inline constexpr int kMaxShards = 10000;

struct ShardIndex {
  int index = 0;
  int count = 1;
};

// Where the index comes from when `--shard /N` leaves it out: Slurm job arrays set the first,
// Kubernetes indexed Jobs the second. `lookup` is getenv, or a fake in tests.
using EnvLookup = std::function<const char*(const char*)>;
inline constexpr const char* kShardIndexVariables[] = {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"};

// "I/N" (0 <= I < N <= kMaxShards) or "/N" (I from the environment). Anything else is an
// InputError naming --shard (or the variable that held a bad index): exit 2 before any work.
ShardIndex parse_shard(const std::string& text, const EnvLookup& lookup);

// Each item's shard, balanced by estimated cost: greedy longest processing time first (the
// costliest item goes to the least loaded shard; ties by item order, then by shard index), so the
// assignment depends only on the plan and `count`, and every item is in exactly one shard.
std::vector<int> assign_shards(const Plan& plan, int count);

// The summed cost per shard under an assignment.
std::vector<double> shard_loads(const Plan& plan, const std::vector<int>& shard_of, int count);

}  // namespace convbench

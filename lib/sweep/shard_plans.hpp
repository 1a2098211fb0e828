// How a shard file refers to its plan. A shard run with `--plan FILE` names that file (its path
// relative to the shard file's folder) and the plan's hash instead of carrying the plan, so the
// N files of a plan split into N shards hold the plan once, beside them, and not N times (the
// total size was quadratic in the plan: 1 GiB of shard files at 2,000 one-item shards). A shard
// run without a plan file carries its plan, and stays readable on its own.
//
// ShardPlans is what one command (merge, a shard's rerun, slurm) reads its shard files' plans
// with: each plan is held once, shared by every file of it, and each plan file read once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "results/json_reader.hpp"
#include "sweep/plan.hpp"

namespace convbench {

// What a shard file at `shard_file` writes to name the plan file `plan_file` (as given on the
// command line): its path relative to the shard file's folder, so that the folder of a sweep can
// be moved or copied whole. Empty when the plan cannot be named (standard input): the shard file
// then carries the plan.
std::string plan_file_reference(const std::string& plan_file, const std::string& shard_file);

class ShardPlans {
 public:
  ShardPlans() = default;
  // With a plan the caller already has (a shard's rerun and slurm have the spec's): a shard file
  // that names a plan of that hash is read without reading the plan file again.
  explicit ShardPlans(std::shared_ptr<const Plan> known);

  // The plan a shard file carries (already checked by plan_from_json): the copy held for that
  // hash when there is one, so that 1,000 self-contained shards of one plan hold it once.
  std::shared_ptr<const Plan> carried(Plan plan);

  // The plan of hash `hash` that the shard file `shard_file` names in `reference` (its
  // "plan_file" field, relative to the shard file's folder). Read on first use and checked: a
  // missing or unreadable plan file is an InputError at `reference` (the shard file), a damaged
  // or edited one an InputError in the plan file (plan_from_json recomputes the hash), a plan
  // file of another hash (replaced since the shard ran) an InputError at `reference`.
  std::shared_ptr<const Plan> named(const JsonField& reference, const std::string& hash, const std::string& shard_file);

  // The plan's items that assign_shards gives shard `index` of `count`, in plan order. The
  // assignment is the same for every shard file of a plan and count: made once, not once a file
  // (merge reads N shard files of one plan).
  const std::vector<size_t>& items_of(const Plan& plan, int count, int index);

 private:
  std::shared_ptr<const Plan> keep(std::shared_ptr<const Plan> plan);

  std::map<std::string, std::shared_ptr<const Plan>> by_hash_;
  std::map<std::pair<std::string, int>, std::vector<std::vector<size_t>>> items_by_shard_;  // by (hash, count)
};

}  // namespace convbench

// A plan: every work item of a spec (expanded block x sweep point x variant) in the canonical
// order compare runs them, each with a stable id and an estimated cost, and the plan's own hash.
// Shards (shard_assignment.hpp), shard files (shard_file.hpp) and merge (merge.hpp) refer to
// items by id and to plans by hash, so a shard of one spec can never be merged into another's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.hpp"
#include "spec/spec.hpp"

namespace convbench {

inline constexpr const char* kPlanSchema = "convbench.plan/1";

struct PlanItem {
  std::string id;  // 16 hex digits of the SHA-256 of the resolved item (block at its point + variant)
  std::string block, variant, point_label;
  int64_t flops = 0;  // of the headline phase (the training step, or forward in infer mode)
  int64_t bytes = 0;  // the headline phase's minimum bytes moved
  double cost = 0;    // estimated relative run time (estimated_cost)
};

struct Plan {
  std::string hash;  // 64 hex digits: SHA-256 over the schema and the item ids, in order
  std::string spec_file, spec_sha256;
  std::vector<PlanItem> items;  // the order of analyze_spec's rows (blocks, sweep points, variants)
};

// Relative cost of running one item: a fixed share for the minimum measuring time every item
// spends (warm-up, --min-time of each phase), plus its work at nominal rates (1 GFLOP and 100 MB
// count as one unit each). Only ratios matter: it balances shards, it predicts no seconds.
double estimated_cost(int64_t flops, int64_t bytes);

// `analysis` is analyze_spec(spec): one row per item, in order (their counts give the costs).
Plan make_plan(const Spec& spec, const ResultSet& analysis);

// SHA-256 over the schema name and the ids, in order: what plan.hash must be.
std::string plan_hash_of(const std::vector<PlanItem>& items);

// "block/variant" or "block [point]/variant", for messages.
std::string item_name(const PlanItem& item);

// The plan file (`convbench plan -o`). `shard_of`, when not empty, adds each item's shard.
nlohmann::ordered_json plan_to_json(const Plan& plan, const std::vector<int>& shard_of = {});
// Reads a plan written by plan_to_json (untrusted: every field checked, the hash recomputed);
// InputError located in `file_name`.
Plan plan_from_json(const nlohmann::json& doc, const std::string& file_name, const std::string& key_prefix = "");
Plan load_plan_file(const std::string& path);

}  // namespace convbench

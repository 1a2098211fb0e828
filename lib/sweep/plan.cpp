#include "sweep/plan.hpp"

#include <limits>

#include "results/json_reader.hpp"
#include "util/input_file.hpp"
#include "util/json_text.hpp"
#include "util/sha256.hpp"
#include "variants/resolved_spec.hpp"

namespace convbench {

double estimated_cost(int64_t flops, int64_t bytes) {
  constexpr double kFixedShare = 1.0;  // what a tiny item costs: measuring has a floor
  constexpr double kFlopsPerUnit = 1e9;
  constexpr double kBytesPerUnit = 1e8;
  return kFixedShare + static_cast<double>(flops) / kFlopsPerUnit + static_cast<double>(bytes) / kBytesPerUnit;
}

std::string plan_hash_of(const std::vector<PlanItem>& items) {
  std::string text = std::string(kPlanSchema) + "\n";
  for (const PlanItem& item : items) text += item.id + "\n";
  return sha256_hex(text);
}

std::string item_name(const PlanItem& item) {
  return item.block + (item.point_label.empty() ? "" : " [" + item.point_label + "]") + "/" + item.variant;
}

Plan make_plan(const Spec& spec, const ResultSet& analysis) {
  // The resolved spec is the canonical text of what runs: every default applied, every sweep
  // expanded. An item is its block at the point (without the sibling variants, so adding a
  // variant leaves the others' ids alone) plus its own resolved variant.
  const nlohmann::ordered_json resolved = resolved_spec_json(spec);
  Plan plan;
  plan.spec_file = spec.file;
  plan.spec_sha256 = spec.sha256;
  size_t row = 0;
  // Networks follow the blocks, as in Spec::blocks and the analysis rows.
  nlohmann::ordered_json entries = resolved["blocks"];
  if (resolved.contains("networks"))
    for (const nlohmann::ordered_json& network : resolved["networks"]) entries.push_back(network);
  for (const nlohmann::ordered_json& block : entries) {
    for (const nlohmann::ordered_json& variant : block["variants"]) {
      if (row >= analysis.rows.size()) throw std::logic_error("make_plan: fewer analysis rows than items");
      const ResultRow& r = analysis.rows[row++];
      nlohmann::ordered_json item = block;
      item.erase("variants");
      item["variant"] = variant;
      PlanItem p;
      p.id = sha256_hex(json_text(item)).substr(0, 16);
      p.block = r.block;
      p.variant = r.variant;
      p.point_label = r.point_label;
      p.flops = headline_flops(r);
      p.bytes = headline_bytes(r);
      p.cost = estimated_cost(p.flops, p.bytes);
      plan.items.push_back(std::move(p));
    }
  }
  if (row != analysis.rows.size()) throw std::logic_error("make_plan: more analysis rows than items");
  plan.hash = plan_hash_of(plan.items);
  return plan;
}

nlohmann::ordered_json plan_to_json(const Plan& plan, const std::vector<int>& shard_of) {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (size_t i = 0; i < plan.items.size(); ++i) {
    const PlanItem& p = plan.items[i];
    nlohmann::ordered_json item = {{"index", i},
                                   {"id", p.id},
                                   {"block", p.block},
                                   {"variant", p.variant},
                                   {"point_label", p.point_label},
                                   {"flops", p.flops},
                                   {"bytes", p.bytes},
                                   {"cost", p.cost}};
    if (i < shard_of.size()) item["shard"] = shard_of[i];
    items.push_back(std::move(item));
  }
  return {{"schema", kPlanSchema},
          {"plan_hash", plan.hash},
          {"spec_file", plan.spec_file},
          {"spec_sha256", plan.spec_sha256},
          {"cost_model", "1 + GFLOP + bytes/1e8 of the headline phase (relative; balances shards)"},
          {"items", std::move(items)}};
}

namespace {

bool is_hex(const std::string& s, size_t length) {
  if (s.size() != length) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

Plan plan_from_json(const nlohmann::json& doc, const std::string& file_name, const std::string& key_prefix) {
  const JsonField top(doc, key_prefix, file_name);
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != kPlanSchema)
    throw InputError({file_name, 0, 0}, key_prefix.empty() ? "schema" : key_prefix + ".schema",
                     std::string("not a convbench plan (expected \"schema\": \"") + kPlanSchema + "\")");
  Plan plan;
  plan.hash = top.string("plan_hash", "");
  if (!is_hex(plan.hash, 64)) top.at("plan_hash").fail("expected 64 lower-case hex digits");
  plan.spec_file = top.string("spec_file", "");
  plan.spec_sha256 = top.string("spec_sha256", "");
  for (const JsonField& item : top.at("items").items()) {
    PlanItem p;
    p.id = item.string("id", "");
    if (!is_hex(p.id, 16)) item.at("id").fail("expected 16 lower-case hex digits");
    p.block = item.string("block", "");
    p.variant = item.string("variant", "");
    p.point_label = item.string("point_label", "");
    p.flops = item.integer("flops", 0);
    p.bytes = item.integer("bytes", 0);
    p.cost = item.number("cost", 0.0, 0.0, std::numeric_limits<double>::max());
    if (static_cast<int64_t>(plan.items.size()) != item.integer("index", -1, -1))
      item.at("index").fail("expected " + std::to_string(plan.items.size()) + " (items are listed in order)");
    plan.items.push_back(std::move(p));
  }
  // The hash is recomputed, not trusted: an edited item list is another plan.
  if (plan_hash_of(plan.items) != plan.hash)
    top.at("plan_hash").fail("does not match the listed items (the file was edited or is damaged)");
  return plan;
}

Plan load_plan_file(const std::string& path) {
  const InputText in = read_input_file(path, "plan file", kMaxResultsBytes);
  return plan_from_json(parse_json_input(in, "plan file"), in.name);
}

}  // namespace convbench

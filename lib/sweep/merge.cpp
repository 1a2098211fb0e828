#include "sweep/merge.hpp"

#include <map>
#include <set>

#include "results/index_ranges.hpp"
#include "results/json_results.hpp"
#include "util/input_error.hpp"
#include "util/json_text.hpp"
#include "util/utf8.hpp"

namespace convbench {
namespace {

std::string field(const nlohmann::json& provenance, const char* key) {
  if (!provenance.is_object() || !provenance.contains(key)) return "";
  const nlohmann::json& v = provenance[key];
  return v.is_string() ? v.get<std::string>() : json_text(v);
}

std::string join(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

struct Candidate {
  size_t input;
  size_t row;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> run_signature(const ResultSet& results) {
  const nlohmann::json& p = results.provenance;
  const std::string gpu = field(p, "gpu_name");
  return {{"device", results.device + (gpu.empty() ? " (" + field(p, "cpu") + ")" : " (" + gpu + ")")},
          {"convbench", field(p, "convbench_version") + " " + field(p, "git_commit")},
          {"oneDNN", field(p, "onednn_version")},
          {"CUDA", field(p, "cuda_version")},
          {"cuDNN", field(p, "cudnn_version")}};
}

MergeOutcome merge_shards(const std::vector<MergeInput>& inputs, bool allow_mixed) {
  if (inputs.empty()) throw InputError({"command line", 0, 0}, "SHARD", "no shard files to merge");
  const MergeInput& first = inputs.front();
  MergeOutcome out;
  out.plan = first.shard.plan;
  out.shard_count = first.shard.shard.count;
  for (const MergeInput& in : inputs) {
    if (in.shard.plan->hash != out.plan->hash)
      throw InputError({in.file, 0, 0}, "shard.plan_hash",
                       "belongs to plan " + in.shard.plan->hash.substr(0, 12) + ", " + first.file + " to plan " +
                           out.plan->hash.substr(0, 12) +
                           ": shards of different plans (another spec, or the spec changed) cannot be merged");
    if (in.shard.shard.count != out.shard_count)
      throw InputError({in.file, 0, 0}, "shard.count",
                       "is shard " + std::to_string(in.shard.shard.index) + " of " +
                           std::to_string(in.shard.shard.count) + ", " + first.file + " one of " +
                           std::to_string(out.shard_count) + ": merge shards of one split (the same N)");
  }

  // The devices and versions each file ran with; refused when they differ, unless allowed.
  std::map<std::vector<std::pair<std::string, std::string>>, std::vector<size_t>> by_signature;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!inputs[k].shard.results.rows.empty()) by_signature[run_signature(inputs[k].shard.results)].push_back(k);
  if (by_signature.size() > 1) {
    out.mixed = true;
    if (!allow_mixed) {
      const auto a = run_signature(inputs[by_signature.begin()->second.front()].shard.results);
      const size_t other = std::next(by_signature.begin())->second.front();
      const auto b = run_signature(inputs[other].shard.results);
      std::string diff;
      for (size_t i = 0; i < a.size(); ++i)
        if (a[i].second != b[i].second)
          diff += (diff.empty() ? "" : "; ") + a[i].first + " \"" + b[i].second + "\" vs \"" + a[i].second + "\"";
      throw InputError({inputs[other].file, 0, 0}, "provenance",
                       "ran on another device or with other versions than " +
                           inputs[by_signature.begin()->second.front()].file + " (" + diff +
                           "): their times are not one comparison; --allow-mixed merges them anyway and records "
                           "which rows ran where");
    }
  }

  // Every row each item has, in argument order.
  std::vector<std::vector<Candidate>> candidates(out.plan->items.size());
  for (size_t k = 0; k < inputs.size(); ++k)
    for (const ShardItem& s : inputs[k].shard.items)
      if (s.row) candidates[s.item].push_back({k, *s.row});

  std::vector<std::vector<size_t>> rows_of_input(inputs.size());
  for (size_t i = 0; i < out.plan->items.size(); ++i) {
    const PlanItem& item = out.plan->items[i];
    const Candidate* chosen = nullptr;
    for (const Candidate& c : candidates[i]) {
      const bool ok = settled(inputs[c.input].shard.results.rows[c.row].status);
      if (ok && chosen && settled(inputs[chosen->input].shard.results.rows[chosen->row].status))
        throw InputError({inputs[c.input].file, 0, 0}, "shard.items",
                         "item " + item.id + " (" + item_name(item) + ") is also done in " +
                             inputs[chosen->input].file +
                             ": each item must be covered once (the same shard "
                             "given twice, or shard files of two runs)");
      if (chosen && !ok && settled(inputs[chosen->input].shard.results.rows[chosen->row].status)) continue;
      if (chosen)
        out.notes.push_back(item_name(item) + ": the " + to_string(inputs[c.input].shard.results.rows[c.row].status) +
                            " row of " + inputs[c.input].file + " replaces the " +
                            to_string(inputs[chosen->input].shard.results.rows[chosen->row].status) + " row of " +
                            inputs[chosen->input].file);
      chosen = &c;
    }
    if (!chosen) {
      out.missing.push_back(i);
      continue;
    }
    rows_of_input[chosen->input].push_back(out.results.rows.size());
    out.results.rows.push_back(inputs[chosen->input].shard.results.rows[chosen->row]);
    if (!settled(out.results.rows.back().status)) out.unsettled.push_back(i);
  }

  const std::vector<int> shard_of = assign_shards(*out.plan, out.shard_count);
  std::set<int> rerun;
  for (size_t i : out.missing) rerun.insert(shard_of[i]);
  for (size_t i : out.unsettled) rerun.insert(shard_of[i]);
  out.rerun.assign(rerun.begin(), rerun.end());

  // The merged file's engine, device and provenance are the first file's (identical fields
  // across files unless mixed); each source keeps its own in the plan section.
  out.results.engine = first.shard.results.engine;
  out.results.device = first.shard.results.device;
  out.results.provenance = first.shard.results.provenance;
  if (out.mixed) {
    std::set<std::string> devices;
    for (const MergeInput& in : inputs)
      if (!in.shard.results.device.empty()) devices.insert(in.shard.results.device);
    std::string all;
    for (const std::string& d : devices) all += (all.empty() ? "" : "+") + d;
    out.results.device = all;
  }

  nlohmann::json sources = nlohmann::json::array();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ResultSet& r = inputs[k].shard.results;
    nlohmann::json signature = nlohmann::json::object();
    for (const auto& [key, value] : run_signature(r)) signature[key] = value;
    sources.push_back({{"file", escape_invalid_utf8(inputs[k].file)},
                       {"shard", inputs[k].shard.shard.index},
                       {"host_name", field(r.provenance, "host_name")},
                       {"date", field(r.provenance, "date")},
                       {"ran", signature},
                       {"rows", rows_of_input[k]}});
    if (out.mixed && !rows_of_input[k].empty())
      out.notes.push_back("rows " + index_ranges(rows_of_input[k]) + " ran on " +
                          signature["device"].get<std::string>() + " at " + field(r.provenance, "host_name") +
                          " (shard " + std::to_string(inputs[k].shard.shard.index) + ", " + inputs[k].file + ")");
  }
  nlohmann::json missing = nlohmann::json::array();
  for (size_t i : out.missing)
    missing.push_back({{"id", out.plan->items[i].id}, {"item", item_name(out.plan->items[i])}, {"shard", shard_of[i]}});
  nlohmann::json unsettled = nlohmann::json::array();
  for (size_t i : out.unsettled)
    unsettled.push_back(
        {{"id", out.plan->items[i].id}, {"item", item_name(out.plan->items[i])}, {"shard", shard_of[i]}});
  out.plan_section = {{"plan_hash", out.plan->hash},     {"shards", out.shard_count},
                      {"items", out.plan->items.size()}, {"covered", out.results.rows.size() - out.unsettled.size()},
                      {"missing", std::move(missing)},   {"unsettled", std::move(unsettled)},
                      {"rerun_shards", out.rerun},       {"mixed", out.mixed},
                      {"sources", std::move(sources)}};
  if (!out.rerun.empty())
    out.notes.push_back("rerun shards: " + join(out.rerun) + " (of " + std::to_string(out.shard_count) + ")");
  return out;
}

nlohmann::json merged_results_json(const MergeOutcome& outcome) {
  nlohmann::json doc = results_to_json(outcome.results);
  doc["plan"] = outcome.plan_section;
  return doc;
}

}  // namespace convbench

#include "sweep/shard_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <set>
#include <system_error>

#include "results/json_reader.hpp"
#include "results/json_results.hpp"
#include "util/input_error.hpp"
#include "util/input_file.hpp"

namespace convbench {

bool settled(RunStatus status) { return status == RunStatus::ok || status == RunStatus::unsupported; }

bool shard_complete(const ShardFile& file) {
  for (const ShardItem& item : file.items)
    if (!item.row || !settled(file.results.rows[*item.row].status)) return false;
  return true;
}

nlohmann::json shard_file_json(const ShardFile& file) {
  nlohmann::json doc = results_to_json(file.results);
  nlohmann::json items = nlohmann::json::array();
  for (const ShardItem& s : file.items) {
    nlohmann::json item = {{"id", file.plan->items[s.item].id}};
    if (s.row) {
      item["status"] = to_string(file.results.rows[*s.row].status);
      item["row"] = *s.row;
    } else {
      item["status"] = "pending";
    }
    items.push_back(std::move(item));
  }
  doc["shard"] = {{"schema", kShardSchema},
                  {"plan_hash", file.plan->hash},
                  {"index", file.shard.index},
                  {"count", file.shard.count},
                  {"items", std::move(items)}};
  if (file.plan_file.empty())
    doc["shard"]["plan"] = plan_to_json(*file.plan);
  else
    doc["shard"]["plan_file"] = file.plan_file;
  return doc;
}

ShardFile shard_file_from_json(const nlohmann::json& doc, const std::string& file_name, ShardPlans& plans) {
  ShardFile file;
  file.results = results_from_json(doc, file_name);
  const JsonField top(doc, "", file_name);
  const auto shard = top.object("shard");
  if (!shard) throw InputError({file_name, 0, 0}, "shard", "not a shard's results (no \"shard\" section)");
  const std::string schema = shard->string("schema", "");
  if (schema != kShardSchema && schema != kShardSchemaCarrying)
    shard->at("schema").fail(std::string("expected \"") + kShardSchema + "\" (or the older \"" + kShardSchemaCarrying +
                             "\")");
  const std::string hash = shard->string("plan_hash", "");
  const auto named = shard->find("plan_file");
  if (named && shard->find("plan")) shard->fail("expected \"plan\" or \"plan_file\", not both");
  if (named && schema == kShardSchema) {
    file.plan = plans.named(*named, hash, file_name);
    file.plan_file = named->value().get<std::string>();
  } else {
    Plan carried = plan_from_json(shard->at("plan").value(), file_name, "shard.plan");
    if (hash != carried.hash) shard->at("plan_hash").fail("is not the hash of shard.plan");
    file.plan = plans.carried(std::move(carried));
  }
  file.shard.count = static_cast<int>(shard->integer("count", 0, 1, kMaxShards));
  file.shard.index = static_cast<int>(shard->integer("index", -1, 0, file.shard.count - 1));
  if (!shard->find("count") || !shard->find("index")) shard->fail("expected \"index\" and \"count\"");

  const std::vector<size_t>& mine = plans.items_of(*file.plan, file.shard.count, file.shard.index);
  const std::vector<JsonField> items = shard->at("items").items();
  if (items.size() != mine.size())
    shard->at("items").fail("expected the " + std::to_string(mine.size()) + " items of shard " +
                            std::to_string(file.shard.index) + "/" + std::to_string(file.shard.count) + ", got " +
                            std::to_string(items.size()));
  std::set<size_t> rows_used;
  std::vector<std::string> statuses = {"pending"};
  for (RunStatus s : kRunStatuses) statuses.push_back(to_string(s));
  for (size_t k = 0; k < items.size(); ++k) {
    const JsonField& item = items[k];
    const PlanItem& planned = file.plan->items[mine[k]];
    if (item.string("id", "") != planned.id)
      item.at("id").fail("expected \"" + planned.id + "\" (" + item_name(planned) + "), the shard's next item");
    ShardItem s{mine[k], std::nullopt};
    const std::string status = item.choice("status", "pending", statuses);
    if (status != "pending") {
      const int64_t row = item.integer("row", -1, 0, static_cast<int64_t>(file.results.rows.size()) - 1);
      if (row < 0) item.at("row").fail("expected the row of a done item");
      if (!rows_used.insert(static_cast<size_t>(row)).second) item.at("row").fail("names a row another item has");
      const ResultRow& r = file.results.rows[static_cast<size_t>(row)];
      if (r.block != planned.block || r.variant != planned.variant || r.point_label != planned.point_label)
        item.at("row").fail("holds " + r.block + "/" + r.variant + ", not " + item_name(planned));
      if (to_string(r.status) != status) item.at("status").fail("differs from the row's status " + to_string(r.status));
      s.row = static_cast<size_t>(row);
    }
    file.items.push_back(s);
  }
  if (rows_used.size() != file.results.rows.size()) top.at("results").fail("has rows that no item of the shard names");
  return file;
}

ShardFile load_shard_file(const std::string& path, ShardPlans& plans) {
  const InputText in = read_input_file(path, "shard results file", kMaxResultsBytes);
  return shard_file_from_json(parse_json_input(in, "shard results file"), in.name, plans);
}

ShardFileRead read_shard_file(const std::string& path, ShardPlans& plans) {
  const InputText in = read_input_file(path, "shard results file", kMaxResultsBytes);
  nlohmann::json doc;
  try {
    doc = parse_json_input(in, "shard results file");
  } catch (const InputError& e) {
    return {std::nullopt, e.what()};
  }
  return {shard_file_from_json(doc, in.name, plans), ""};
}

std::string move_damaged_shard_aside(const std::string& path) {
  for (int n = 1; n < 1000; ++n) {
    const std::string aside = path + ".damaged" + (n == 1 ? "" : "-" + std::to_string(n));
    struct stat st {};
    if (::lstat(aside.c_str(), &st) == 0) continue;
    if (::rename(path.c_str(), aside.c_str()) == 0) return aside;
    throw InputError({path, 0, 0}, "",
                     "is damaged and cannot be moved aside to " + aside + ": " +
                         std::generic_category().message(errno) + "; remove it and rerun");
  }
  throw InputError({path, 0, 0}, "", "is damaged, and 999 damaged copies are already beside it; remove them");
}

}  // namespace convbench

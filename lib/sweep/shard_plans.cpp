#include "sweep/shard_plans.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "sweep/shard_assignment.hpp"
#include "util/input_error.hpp"

namespace convbench {

std::string plan_file_reference(const std::string& plan_file, const std::string& shard_file) {
  if (plan_file.empty() || plan_file == "-") return "";
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path folder = fs::absolute(fs::path(shard_file), error).parent_path();
  if (error) return "";
  // Relative over the real paths (symbolic links resolved): a lexical ../plan.json from a folder
  // that is a link would lead the kernel somewhere else.
  const fs::path relative = fs::relative(fs::path(plan_file), folder, error);
  if (error || relative.empty()) return "";
  return relative.generic_string();
}

ShardPlans::ShardPlans(std::shared_ptr<const Plan> known) { keep(std::move(known)); }

std::shared_ptr<const Plan> ShardPlans::keep(std::shared_ptr<const Plan> plan) {
  return by_hash_.emplace(plan->hash, std::move(plan)).first->second;
}

std::shared_ptr<const Plan> ShardPlans::carried(Plan plan) {
  if (const auto it = by_hash_.find(plan.hash); it != by_hash_.end()) return it->second;
  return keep(std::make_shared<const Plan>(std::move(plan)));
}

std::shared_ptr<const Plan> ShardPlans::named(const JsonField& reference, const std::string& hash,
                                              const std::string& shard_file) {
  const std::string name = reference.value().is_string() ? reference.value().get<std::string>() : "";
  if (name.empty()) reference.fail("expected the plan file's path, relative to the shard file's folder");
  if (const auto it = by_hash_.find(hash); it != by_hash_.end()) return it->second;
  const std::string path = (std::filesystem::path(shard_file).parent_path() / name).string();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    reference.fail("names the plan file " + path + ", which cannot be read (" + std::generic_category().message(errno) +
                   "): the shard file names its plan instead of carrying it; keep the plan file (convbench plan "
                   "-o, or slurm's --dir/plan.json) where the shard file says, or rerun the shard");
  Plan plan;
  try {
    plan = load_plan_file(path);
  } catch (const InputError& e) {
    throw InputError(e.where(), e.key_path(), e.message() + " (the plan file of " + shard_file + ")");
  }
  if (plan.hash != hash)
    reference.fail("names " + path + ", which is plan " + plan.hash.substr(0, 12) + ", not the shard's plan " +
                   hash.substr(0, 12) +
                   ": the plan file was replaced since the shard ran (by another spec's plan, or the spec "
                   "changed)");
  return keep(std::make_shared<const Plan>(std::move(plan)));
}

const std::vector<size_t>& ShardPlans::items_of(const Plan& plan, int count, int index) {
  auto [it, added] = items_by_shard_.try_emplace({plan.hash, count});
  if (added) {
    it->second.resize(static_cast<size_t>(count));
    const std::vector<int> shard_of = assign_shards(plan, count);
    for (size_t i = 0; i < shard_of.size(); ++i) it->second[static_cast<size_t>(shard_of[i])].push_back(i);
  }
  return it->second[static_cast<size_t>(index)];
}

}  // namespace convbench

#include "sweep/shard_assignment.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <optional>
#include <queue>
#include <utility>

#include "util/input_error.hpp"

namespace convbench {
namespace {

[[noreturn]] void refuse(const std::string& key, const std::string& why) {
  throw InputError({"command line", 0, 0}, key, why);
}

// A decimal number in [0, max], digits only (no sign, no spaces, no "0x").
std::optional<long> decimal(std::string_view text, long max) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > max) return std::nullopt;
  return value;
}

}  // namespace

ShardIndex parse_shard(const std::string& text, const EnvLookup& lookup) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos)
    refuse("--shard",
           "expected I/N (shard I of N, counted from 0) or /N (I from SLURM_ARRAY_TASK_ID or "
           "JOB_COMPLETION_INDEX), got \"" +
               text + "\"");
  const auto count = decimal(std::string_view(text).substr(slash + 1), kMaxShards);
  if (!count || *count == 0)
    refuse("--shard", "N in I/N must be a whole number from 1 to " + std::to_string(kMaxShards) + ", got \"" +
                          text.substr(slash + 1) + "\"");
  ShardIndex shard;
  shard.count = static_cast<int>(*count);
  if (slash > 0) {
    const auto index = decimal(std::string_view(text).substr(0, slash), kMaxShards);
    if (!index) refuse("--shard", "I in I/N must be a whole number, got \"" + text.substr(0, slash) + "\"");
    if (*index >= *count) refuse("--shard", "I must be below N (shards are counted from 0), got " + text);
    shard.index = static_cast<int>(*index);
    return shard;
  }
  for (const char* name : kShardIndexVariables) {
    const char* value = lookup(name);
    if (value == nullptr) continue;
    const auto index = decimal(value, kMaxShards);
    if (!index) refuse(name, std::string("expected the shard index (a whole number), got \"") + value + "\"");
    if (*index >= *count)
      refuse(name, std::to_string(*index) + " is not below the shard count " + std::to_string(*count) + " of --shard " +
                       text);
    shard.index = static_cast<int>(*index);
    return shard;
  }
  refuse("--shard", "/" + std::to_string(*count) +
                        " takes the shard index from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX, and neither is "
                        "set; give it as I/" +
                        std::to_string(*count));
}

std::vector<int> assign_shards(const Plan& plan, int count) {
  if (count < 1) throw std::invalid_argument("assign_shards: count must be at least 1");
  std::vector<size_t> order(plan.items.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return plan.items[a].cost > plan.items[b].cost; });
  // The least loaded shard, the lowest index among equals: a min-heap of (load, shard), so that
  // N items into N shards take N log N, not N squared (merge assigns once per shard file it
  // reads: 2,000 one-item shards took seconds of min_element scans).
  using Load = std::pair<double, int>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> least;
  for (int shard = 0; shard < count; ++shard) least.push({0.0, shard});
  std::vector<int> shard_of(plan.items.size(), 0);
  for (size_t item : order) {
    auto [load, shard] = least.top();
    least.pop();
    shard_of[item] = shard;
    least.push({load + plan.items[item].cost, shard});
  }
  return shard_of;
}

std::vector<double> shard_loads(const Plan& plan, const std::vector<int>& shard_of, int count) {
  std::vector<double> load(static_cast<size_t>(std::max(count, 0)), 0.0);
  for (size_t i = 0; i < plan.items.size() && i < shard_of.size(); ++i)
    if (shard_of[i] >= 0 && shard_of[i] < count) load[static_cast<size_t>(shard_of[i])] += plan.items[i].cost;
  return load;
}

}  // namespace convbench

#include "report/results.hpp"

#include <map>

namespace convbench {

std::vector<std::vector<const ResultRow*>> group_by_block(const ResultSet& results) {
  std::vector<std::vector<const ResultRow*>> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const ResultRow& r : results.rows) {
    auto key = std::make_pair(r.block, r.point_label);
    auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, groups.size());
      groups.push_back({&r});
    } else {
      groups[it->second].push_back(&r);
    }
  }
  return groups;
}

const ResultRow& baseline_of(const std::vector<const ResultRow*>& group) {
  for (const ResultRow* r : group)
    if (r->is_baseline) return *r;
  return *group.front();
}

}  // namespace convbench

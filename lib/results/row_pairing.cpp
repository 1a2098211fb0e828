#include "results/row_pairing.hpp"

#include <map>
#include <set>

namespace convbench {

std::string RowKey::text() const {
  return block + (point_label.empty() ? "" : " [" + point_label + "]") + " / " + variant;
}

RowKey key_of(const ResultRow& r) { return {r.block, r.variant, r.point_label}; }

RowPairing pair_rows_by_key(const ResultSet& left, const ResultSet& right) {
  RowPairing p;
  std::map<RowKey, const ResultRow*> right_rows;
  for (const ResultRow& r : right.rows) right_rows.emplace(key_of(r), &r);
  std::set<RowKey> left_keys;
  for (const ResultRow& r : left.rows) {
    const RowKey key = key_of(r);
    left_keys.insert(key);
    const auto it = right_rows.find(key);
    if (it == right_rows.end())
      p.only_in_left.push_back(key);
    else
      p.pairs.push_back({&r, it->second});
  }
  for (const ResultRow& r : right.rows)
    if (!left_keys.count(key_of(r))) p.only_in_right.push_back(key_of(r));
  return p;
}

}  // namespace convbench

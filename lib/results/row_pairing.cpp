#include "results/row_pairing.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

namespace convbench {

std::string RowKey::text() const {
  return block + (point_label.empty() ? "" : " [" + point_label + "]") + " / " + variant;
}

RowKey key_of(const ResultRow& r) { return {r.block, r.variant, r.point_label}; }

namespace {

// Pairs each row of `left` with the first row of `right` that has its key.
RowPairing pair_rows_with(const ResultSet& left, const ResultSet& right,
                          const std::function<RowKey(const ResultRow&)>& key_for) {
  RowPairing p;
  std::map<RowKey, const ResultRow*> right_rows;
  for (const ResultRow& r : right.rows) right_rows.emplace(key_for(r), &r);
  std::set<RowKey> left_keys;
  for (const ResultRow& r : left.rows) {
    const RowKey key = key_for(r);
    left_keys.insert(key);
    const auto it = right_rows.find(key);
    if (it == right_rows.end())
      p.only_in_left.push_back(key);
    else
      p.pairs.push_back({&r, it->second});
  }
  for (const ResultRow& r : right.rows)
    if (const RowKey key = key_for(r); !left_keys.count(key)) p.only_in_right.push_back(key);
  return p;
}

}  // namespace

const std::vector<std::string>& pairing_field_names() {
  static const std::vector<std::string> names = {"block", "variant", "point", "dtype", "layout", "mode"};
  return names;
}

const std::vector<std::string>& default_pairing_fields() {
  static const std::vector<std::string> fields = {"block", "point", "variant"};
  return fields;
}

void check_pairing_fields(const std::vector<std::string>& fields) {
  std::set<std::string> seen;
  for (const std::string& f : fields) {
    const auto& known = pairing_field_names();
    if (std::find(known.begin(), known.end(), f) == known.end())
      throw std::invalid_argument("unknown field \"" + f + "\" (known: block, variant, point, dtype, layout, mode)");
    if (!seen.insert(f).second) throw std::invalid_argument("field \"" + f + "\" given twice");
  }
  if (!seen.count("block") || !seen.count("variant"))
    throw std::invalid_argument("rows always pair by block and variant: name both");
}

RowKey key_of(const ResultRow& r, const std::vector<std::string>& fields) {
  auto has = [&](const char* f) { return std::find(fields.begin(), fields.end(), f) != fields.end(); };
  std::string label = has("point") ? r.point_label : "";
  auto add = [&](const char* f, const std::string& v) {
    if (has(f)) label += (label.empty() ? "" : ", ") + std::string(f) + "=" + v;
  };
  if (fields != default_pairing_fields()) {
    add("dtype", r.dtype);
    add("layout", r.layout);
    add("mode", r.mode);
  }
  return {r.block, r.variant, label};
}

RowPairing pair_rows_by_fields(const ResultSet& left, const ResultSet& right, const std::vector<std::string>& fields) {
  if (fields == default_pairing_fields()) return pair_rows_by_key(left, right);
  for (const auto* side : {&left, &right}) {
    std::map<RowKey, int> count;
    for (const ResultRow& r : side->rows)
      if (++count[key_of(r, fields)] == 2)
        throw std::invalid_argument("two rows of one file pair as \"" + key_of(r, fields).text() +
                                    "\": add the field that tells them apart to --pair-by (e.g. point)");
  }
  return pair_rows_with(left, right, [&](const ResultRow& r) { return key_of(r, fields); });
}

RowPairing pair_rows_by_key(const ResultSet& left, const ResultSet& right) {
  return pair_rows_with(left, right, [](const ResultRow& r) { return key_of(r); });
}

}  // namespace convbench

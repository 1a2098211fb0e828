// Pairs the rows of two result sets by their key (block, sweep point, variant): what
// `convbench diff` and `report --against` both compare.
#pragma once

#include <vector>

#include "results/results.hpp"

namespace convbench {

// What pairs rows across two results files (diff, --against): block, variant and sweep point.
struct RowKey {
  std::string block, variant, point_label;
  std::string text() const;  // "block [point] / variant"
  auto operator<=>(const RowKey&) const = default;
};
RowKey key_of(const ResultRow& r);

struct RowPair {
  const ResultRow* left;
  const ResultRow* right;
};

struct RowPairing {
  std::vector<RowPair> pairs;                       // in `left`'s row order
  std::vector<RowKey> only_in_left, only_in_right;  // each in its own set's row order
};

// A key that appears twice on the right pairs with its first row there. The pairs point into
// `left` and `right`, which must outlive the pairing (temporaries are refused).
RowPairing pair_rows_by_key(const ResultSet& left, const ResultSet& right);
RowPairing pair_rows_by_key(ResultSet&&, const ResultSet&) = delete;
RowPairing pair_rows_by_key(const ResultSet&, ResultSet&&) = delete;

}  // namespace convbench

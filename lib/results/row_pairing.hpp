// Pairs the rows of two result sets by their key (block, sweep point, variant): what
// `convbench diff` and `report --against` both compare.
#pragma once

#include <string>
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

// The fields rows may be paired by (diff --pair-by); block and variant are always among them.
// Default: block, point, variant. Leaving out layout (or dtype, mode) pairs a channels-first row
// with the channels-last row of the same block and variant.
const std::vector<std::string>& pairing_field_names();
const std::vector<std::string>& default_pairing_fields();
// Throws std::invalid_argument for an unknown or repeated field, or without block and variant.
void check_pairing_fields(const std::vector<std::string>& fields);
// The key of `r` under `fields`: block and variant, and the other chosen fields as the label
// (the point's label alone for the default fields, as key_of).
RowKey key_of(const ResultRow& r, const std::vector<std::string>& fields);
// Pairs under `fields`. With fields other than the default, a key shared by two rows of one side
// is ambiguous: std::invalid_argument naming them (which of them would be compared is a guess).
RowPairing pair_rows_by_fields(const ResultSet& left, const ResultSet& right, const std::vector<std::string>& fields);
RowPairing pair_rows_by_fields(ResultSet&&, const ResultSet&, const std::vector<std::string>&) = delete;
RowPairing pair_rows_by_fields(const ResultSet&, ResultSet&&, const std::vector<std::string>&) = delete;

// A key that appears twice on the right pairs with its first row there. The pairs point into
// `left` and `right`, which must outlive the pairing (temporaries are refused).
RowPairing pair_rows_by_key(const ResultSet& left, const ResultSet& right);
RowPairing pair_rows_by_key(ResultSet&&, const ResultSet&) = delete;
RowPairing pair_rows_by_key(const ResultSet&, ResultSet&&) = delete;

}  // namespace convbench

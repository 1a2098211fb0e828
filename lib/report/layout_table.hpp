// The "layouts" table of a block run in both layouts (seed 004: is channels-last faster than
// channels-first for my blocks?): per variant and sweep point, channels-last over channels-first
// of the headline time and of the peak, next to the two times. The per-point tables show each
// layout against its baseline; only this one puts a variant's two layouts side by side.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/summary_tables.hpp"
#include "results/results.hpp"

namespace convbench {

// `block_rows`: the rows of one block and mode (every sweep point). Empty unless the rows hold
// both channels_first and channels_last runs of a variant at the same point otherwise; a row
// whose other layout is missing is left out.
std::optional<BlockTable> layouts_table(const std::vector<const ResultRow*>& block_rows);
// The note under a layouts table of these rows: which way the ratios go, and what a channels-last
// row's boundary conversions add to it.
std::string layouts_note(const std::vector<const ResultRow*>& block_rows);

}  // namespace convbench

// The "block vs network" table (seed 000: the bottleneck block is slower and fatter on its own,
// but what does it do to the whole network?): per variant, its step time and peak against the
// baseline measured on a single block and on a whole network in the same run, side by side, so a
// user sees whether an effect found on one block survives, shrinks or flips at network scale.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/summary_tables.hpp"
#include "results/results.hpp"

namespace convbench {

// Empty unless the results hold a network group and a block group of the same mode whose
// baselines have the same variant name and which share at least one other variant name. One
// table row per such variant and (network group, block group) pair.
std::optional<BlockTable> network_vs_block_table(const ResultSet& results);
// One sentence per row of that table: "bottleneck: 1.36x peak, 1.16x step per block
// (vnet-block); 1.17x peak, 0.91x step per network (vbnet)". Empty without a table.
std::string network_vs_block_note(const ResultSet& results);

}  // namespace convbench

// The lines under a block's table for its folded variants (configs/README.md "Folded convolutions"): what
// each folds into what, the proof that it equals its source (the maximum relative error on the
// reference backend in float64), and what the fold buys against its source, generated from the
// rows' facts: "what it buys: 1 op instead of 5; keeps 1 tensor instead of 3 for backward:
// -96.00 MiB at the peak (300.00 MiB -> 204.00 MiB); step 0.41x (12.3 -> 5.1 ms)".
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

// One paragraph per folded row of the group (rows of one block), each line ending in "\n";
// empty when the group has none. The source's row, when in the group at the same sweep point,
// gives the comparison.
std::string fold_notes(const std::vector<const ResultRow*>& group);

// The one-sentence "what it buys" of a folded row against its source's row.
std::string fold_buys(const ResultRow& folded, const ResultRow& source);

}  // namespace convbench

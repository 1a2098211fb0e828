// The "networks side by side" table (seed 001: EfficientNet, MobileNet and RegNet have a fraction
// of ResNet-50's FLOPs; are they faster?): every network of the run at the same input, its
// baseline variant's counts, time and peak, with ratios to the first network of the spec, and a
// sentence per network on whether its FLOPs predict its time.
#pragma once

#include <optional>
#include <string>

#include "report/summary_tables.hpp"
#include "results/results.hpp"

namespace convbench {

// One table per input (shape, dtype, layout, mode, device) that two or more networks share: one
// row per network (its baseline variant), in the spec's order, ratios to the first. Empty (no
// table) when no two networks share an input.
std::vector<BlockTable> networks_side_by_side_tables(const ResultSet& results);
// Under each table: per network with a time ratio, its FLOPs, time and time per FLOP against the
// reference ("efficientnet-b0: 0.39x the FLOPs, 1.52x the time of resnet50: 3.90x the time per
// FLOP"). Empty without tables.
std::string networks_side_by_side_note(const ResultSet& results);

}  // namespace convbench

// A variant's op graph in one line, for the line under a block's table: what the variant builds,
// shortcut included, so that a reader comparing it with their own block sees every op (a
// residual's projection, whether an activation follows the add) without reading the spec.
//
//   conv 3x3 16→32, batch_norm, relu; shortcut: conv 1x1 16→32, batch_norm; add(relu + shortcut.batch_norm)
//
// Ops in execution order, grouped by the prefix of their names (`shortcut.conv` is in the group
// `shortcut`); convolutions with kernel, channels, stride (/2) and groups (g4); an op with several
// inputs names what it reads (the first and last of more than three); a run of segments repeated
// three times or more is said once with its count ("12 × [split: slice; branches: conv ...]").
#pragma once

#include <string>

#include "graph/graph.hpp"

namespace convbench {

std::string graph_outline(const Graph& graph);

}  // namespace convbench

// The identity of a variant's resolved op graph, for the results history (lib/history): a block
// whose definition changed (another kernel, an extra op, a new default) must start a new series
// instead of continuing the old one, even when its block and variant names stayed.
#pragma once

#include <string>

#include "graph/graph.hpp"

namespace convbench {

// The canonical text hashed: one line for the input (shape, dtype, layout), the mode, then one
// line per op in execution order with its kind, its input and output value ids, the output's
// shape, dtype and layout, and its attributes with every default applied (the resolved spec's
// spelling, and "in_place" for an op a memory policy runs in place), one line per parameter and
// buffer shape, and for a graph with a memory policy the policy and its recompute segments. Names
// are left out: renaming an op does not change what is computed.
std::string graph_canonical_text(const Graph& graph, bool training);
// SHA-256 (hex) of graph_canonical_text.
std::string graph_hash(const Graph& graph, bool training);

}  // namespace convbench

// Expands a network (spec/network_spec.hpp) with one of its variants into one op graph: every
// stage's entries in order, unit instances with their $params substituted, `repeat` unrolled,
// every slot filled by the variant (or by `standard` where the variant's `fills` leaves it out).
// Op names are "<stage>.<entry>[.<repeat index>][.<unit entry>...][.<slot op>]": the first
// component is always the stage. Every bad entry is an InputError at its file:line:col and key
// path; an error inside a unit says which instance it was expanding.
#pragma once

#include <nlohmann/json.hpp>

#include "graph/graph.hpp"
#include "spec/spec.hpp"

namespace convbench {

// `network.network` must be set. `slots`, when given, receives every slot's ops as a range named
// by the slot (its op-name prefix without the trailing '.'), in order: the segments of memory
// policy recompute.
Graph build_network_graph(const BlockSpec& network, const VariantSpec& variant,
                          std::vector<RecomputeSegment>* slots = nullptr);

// The graph's ops as the resolved spec lists a network variant's expansion: name, op kind, input
// value names ("input" is the network input), output shape and attributes as each op's
// definition spells them.
nlohmann::ordered_json expanded_ops_json(const Graph& graph);

}  // namespace convbench

// An op written as JSON: the resolved spec (a custom variant's ops, a folded variant's graph) and
// a network's expanded ops each lead with keys of their own, then add what is common here, so the
// attributes of an op read the same wherever it is written.
#pragma once

#include <nlohmann/json.hpp>

#include "graph/graph.hpp"

namespace convbench {

// Adds `op`'s attributes, as its definition spells them (OpDefinition::attributes; none for a
// kind without), to `out` after the keys it holds.
void add_op_attributes(const Op& op, nlohmann::ordered_json& out);

// The names of `op`'s input values, in order.
nlohmann::ordered_json op_input_names(const Graph& graph, const Op& op);

}  // namespace convbench

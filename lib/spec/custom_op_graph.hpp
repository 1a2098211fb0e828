// A custom variant's ops as a graph (kind_custom.cpp), shared with the kinds whose variants are
// custom ops by another route (kind_onnx.cpp: an ONNX file's nodes, translated).
#pragma once

#include <nlohmann/json.hpp>

#include "graph/graph.hpp"
#include "ops/graph_builder.hpp"
#include "spec/spec.hpp"

namespace convbench {

// The variant's ops, each added from its fields (its definition applies their defaults), reading
// the block input `x`; returns the value that is the variant's output. A bad op is an InputError
// at its spec location and key path.
int build_custom_ops(GraphBuilder& b, const BlockSpec& block, const VariantSpec& v, int x);

// The variant's ops with every field their kinds use, as the graph the variant builder made of
// them resolved them, and its output: the resolved spec's "ops" and "output".
void write_resolved_custom_ops(const VariantSpec& v, const Graph& g, nlohmann::ordered_json& out);

}  // namespace convbench

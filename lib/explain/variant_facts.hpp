// Gathers the facts of one measured (or analysed) row: the graph's per-op counts, the memory
// model's saved tensors and peak moment, and the row's per-op and headline times.
#pragma once

#include "analysis/variant_analysis.hpp"
#include "explain/explanation.hpp"
#include "graph/graph.hpp"
#include "results/results.hpp"

namespace convbench {

// `analysis` must be of `graph` with the workspace of the backend that ran `row`, so that the
// predicted peak is the one the row reports.
VariantFacts collect_variant_facts(const Graph& graph, const VariantAnalysis& analysis, const ResultRow& row);

}  // namespace convbench

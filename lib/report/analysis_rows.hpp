// Builds the analysis part of result rows (counts and predicted memory) from specs.
#pragma once

#include "analysis/variant_analysis.hpp"
#include "graph/graph.hpp"
#include "report/results.hpp"
#include "spec/spec.hpp"

namespace convbench {

ResultRow analysis_row(const BlockSpec& block, const VariantSpec& variant, const Graph& graph,
                       const VariantAnalysis& analysis);

// Builds and analyses every variant of every (expanded) block; throws SpecError located at the
// variant when a graph is invalid or a count overflows 64 bits.
ResultSet analyze_spec(const Spec& spec);

MemoryFigures figures_from(const MemoryPrediction& p);

}  // namespace convbench

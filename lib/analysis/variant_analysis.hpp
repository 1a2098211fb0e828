// Everything convbench knows about a variant on paper: counts summed over its ops, and the
// predicted memory of a training step and of an inference pass.
#pragma once

#include <vector>

#include "analysis/memory_model.hpp"
#include "analysis/op_counts.hpp"
#include "graph/graph.hpp"

namespace convbench {

// Its counts (params, buffers, MACs, FLOPs, bytes: OpCounts' fields) are the sums of its ops'.
struct VariantAnalysis : OpCounts {
  std::vector<OpCounts> per_op;
  MemoryPrediction memory;  // for the spec's mode (training step or inference)
};

// Throws CountOverflow when any count does not fit in 64 bits.
VariantAnalysis analyze_variant(const Graph& graph, bool training, const WorkspaceQuery& workspace = nullptr,
                                const StatisticsQuery& statistics = nullptr);

}  // namespace convbench

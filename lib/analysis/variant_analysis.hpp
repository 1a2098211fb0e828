// Everything convbench knows about a variant on paper: counts summed over its ops, and the
// predicted memory of a training step and of an inference pass.
#pragma once

#include <vector>

#include "analysis/memory_model.hpp"
#include "analysis/op_counts.hpp"
#include "graph/graph.hpp"

namespace convbench {

struct VariantAnalysis {
  int64_t params = 0;
  int64_t buffers = 0;
  int64_t buffer_counters = 0;  // PyTorch's num_batches_tracked elements (op_definition.hpp)
  DirectionCounts macs;
  DirectionCounts flops;
  int64_t bytes_forward = 0;
  int64_t bytes_backward = 0;
  std::vector<OpCounts> per_op;
  MemoryPrediction memory;  // for the spec's mode (training step or inference)
};

// Throws CountOverflow when any count does not fit in 64 bits.
VariantAnalysis analyze_variant(const Graph& graph, bool training, const WorkspaceQuery& workspace = nullptr);

}  // namespace convbench

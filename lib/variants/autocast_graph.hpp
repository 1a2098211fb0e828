// Mixed precision as torch.autocast runs it: a float32 graph rewritten into the graph of an AMP
// step. Each op runs in the dtype its autocast class gives (OpDefinition::autocast, per device),
// a `cast` op is inserted wherever autocast casts an activation (one per consuming op and input,
// as autocast casts at every call), an op of class lower computes with cast copies of its
// parameters (Op::param_cast), and parameters, gradients and norm statistics stay float32.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace convbench {

// An op of the graph has no autocast rule (its definition's `autocast` is empty).
class AutocastError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `plain` is a float32 graph (the block's dtype is float32 under AMP); `precision` an AMP mode.
// `slots` (a network's recompute segments, may be null) are moved to the ops' new positions.
Graph apply_autocast(const Graph& plain, Precision precision, AutocastDevice device,
                     std::vector<RecomputeSegment>* slots);

}  // namespace convbench

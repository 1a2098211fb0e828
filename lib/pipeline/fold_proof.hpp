// The proof that a folded graph computes what its source computes: both run on the reference
// backend in float64 with the same random weights (batch norm running statistics included), the
// folded graph's derived from the source's as a build derives them, and the same random input;
// in training (fold: online) also backward from the same upstream gradient, and every source
// parameter's gradient is compared with the folded graph's gradient of the same parameter.
//
// The error is the largest relative difference, max |a - b| / max |a| over a tensor (the
// difference against the tensor's scale, so values near zero do not blow it up), the largest
// over the output and every gradient. Above kFoldTolerance the fold is wrong.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.hpp"

namespace convbench {

inline constexpr double kFoldTolerance = 1e-10;

struct FoldProof {
  double output_error = 0.0;     // max relative error of the output
  double gradient_error = -1.0;  // the same over every parameter gradient (training only, else -1)
  double max_error() const { return output_error > gradient_error ? output_error : gradient_error; }
};

// `source` and `folded` must be float64 graphs of the same input, `folded` derived from
// `source` (Graph::derivation). Throws std::invalid_argument otherwise.
FoldProof prove_fold(const Graph& source, const Graph& folded, bool training, uint64_t seed = 2024);

// The largest relative difference of `b` from `a` (as above); 0 for two zero tensors.
double max_relative_error(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace convbench

// The facts of a folded variant's row (results/results.hpp FoldFacts): what it folds into what,
// the parameters trained and run, the ops and saved tensors of source and fold, and the proof
// that the folded graph computes what its source computes (pipeline/fold_proof.hpp), run when
// the row is made (analyze, compare, explain and validate all make rows first).
//
// The proof runs at the block's own shape in float64 when that is cheap (the source's forward
// pass at most kFullShapeProofMacs); otherwise at batch 2 and at most 16 per spatial dim, with
// the same channels, kernels and strides, and only if the fold there has the same ops and conv
// geometry as at the real shape (else at the real shape after all). The row says which.
#pragma once

#include <cstdint>

#include "results/results.hpp"
#include "spec/spec.hpp"

namespace convbench {

inline constexpr int64_t kFullShapeProofMacs = 20'000'000;

// Throws std::runtime_error with the figures when the proof finds the fold wrong (beyond
// kFoldTolerance): such a variant is an error, not a row.
FoldFacts fold_facts(const BlockSpec& block, const VariantSpec& folded);

}  // namespace convbench

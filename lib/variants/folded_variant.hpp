// A folded variant ({kind: folded, of: NAME, fold: once|online}): the graph of another variant
// of the block, folded (transforms/fold_graph.hpp).
#pragma once

#include "spec/spec.hpp"
#include "transforms/fold_graph.hpp"

namespace convbench {

// The variant `folded` folds (its `of`; the parser checked that it exists and is not folded).
const VariantSpec& fold_source(const BlockSpec& block, const VariantSpec& folded);

// How the variant folds: once at build time, or online in every step, in the block's mode.
FoldOptions fold_options(const BlockSpec& block, const VariantSpec& folded);

// Builds the source's graph and folds it. Throws InputError located at the variant, with the
// reasons, when nothing of the source can be folded.
FoldResult build_folded_variant(const BlockSpec& block, const VariantSpec& folded);

}  // namespace convbench

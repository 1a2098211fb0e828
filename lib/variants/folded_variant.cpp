#include "variants/folded_variant.hpp"

#include <algorithm>
#include <stdexcept>

#include "graph/shape_rules.hpp"
#include "spec/block_kind_registry.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

const VariantSpec& fold_source(const BlockSpec& block, const VariantSpec& folded) {
  const auto it = std::find_if(block.variants.begin(), block.variants.end(),
                               [&](const VariantSpec& v) { return v.name == folded.of; });
  if (it == block.variants.end() || folds_another(*it))
    throw InputError(folded.where, folded.key_path + ".of", "no unfolded variant named \"" + folded.of + "\"");
  return *it;
}

FoldOptions fold_options(const BlockSpec& block, const VariantSpec& folded) {
  return FoldOptions{folded.fold == "online" ? FoldMode::online : FoldMode::once, block.mode == RunMode::train};
}

FoldResult build_folded_variant(const BlockSpec& block, const VariantSpec& folded) {
  // The fold composes the source's float32 graph; the folded variant's own precision then applies
  // to what it gives (variant_builder.cpp), as autocast would run the folded module.
  VariantSpec plain_source = fold_source(block, folded);
  plain_source.precision = PrecisionChoice{};
  const Graph source = build_variant_graph(block, plain_source);
  try {
    FoldResult r = fold_graph(source, fold_options(block, folded));
    r.graph.name = block.name + "/" + folded.name;
    return r;
  } catch (const FoldRefused& e) {
    throw InputError(folded.where, folded.key_path,
                     "cannot fold \"" + folded.of + "\" (fold: " + folded.fold + "): " + e.what());
  } catch (const GraphError& e) {
    throw InputError(folded.where, folded.key_path, "folding \"" + folded.of + "\": " + e.what());
  }
}

}  // namespace convbench

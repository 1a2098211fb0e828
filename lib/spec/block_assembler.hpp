// The op sequences of the built-in block kinds (configs/README.md "Variants"): conv -> norm -> act units
// and the dropout / residual that end a block's main path. A block (variant_builder.cpp) and a
// network's slot (network_builder.cpp) both assemble them here; a slot names its ops under its
// own prefix ("down2.block.convs.1.") and may end with channel dropout instead of element dropout.
#pragma once

#include <string>
#include <vector>

#include "ops/graph_builder.hpp"
#include "spec/network_spec.hpp"
#include "spec/spec.hpp"

namespace convbench {

// conv -> norm -> act with names "<prefix><unit>conv", "<prefix><unit>norm", "<prefix><unit>act".
class BlockAssembler {
 public:
  BlockAssembler(GraphBuilder& b, const BlockSpec& block, std::string prefix = "",
                 DropoutKind dropout_kind = DropoutKind::element)
      : b_(b), block_(block), prefix_(std::move(prefix)), dropout_kind_(dropout_kind) {}

  // A "spatial" conv uses the block's kernel, padding and dilation; the others are 1x1 convs
  // (no padding, no dilation). Stride is given explicitly.
  int cna(const std::string& unit, int x, int64_t out, bool spatial, std::vector<int64_t> stride, int64_t groups);
  int norm_act(const std::string& unit, int y);
  int norm(const std::string& unit, int y);
  // The block's dropout (none when its rate is 0), named "<prefix>dropout".
  int dropout(int y);
  // Dropout ends the main path; a residual shortcut is added to it.
  int finish_main_path(int x, int main);
  // The main path of a built-in kind (standard, grouped, bottleneck, separable) from `x`, without
  // the dropout and shortcut that finish_main_path adds.
  int main_path(const VariantSpec& v, int x);
  // Branches (seed 003): `count` convs "branches.<i>", each reading the input or its channel slice
  // "split.<i>", concatenated ("cat"), then one norm and act on the concatenation (the same as a
  // norm and act per branch: both work per channel).
  int branches(const VariantSpec& v, int x);

 private:
  GraphBuilder& b_;
  const BlockSpec& block_;
  std::string prefix_;
  DropoutKind dropout_kind_;
};

}  // namespace convbench

// The units block kinds write their op sequences with (configs/README.md "Variants"): conv -> norm
// -> act, and the dropout / residual that end a block's main path. Each kind's main path
// (BlockKindDefinition::main_path, lib/spec/kind_<kind>.cpp) is assembled with them, for a block
// (variants/variant_builder.cpp) and for a network's slot (variants/network_builder.cpp); a slot
// names its ops under its own prefix ("down2.block.convs.1.") and may end with channel dropout
// instead of element dropout.
#pragma once

#include <string>
#include <vector>

#include "ops/graph_builder.hpp"
#include "spec/network_spec.hpp"
#include "spec/spec.hpp"

namespace convbench {

// Whether every stride of the block (or slot) is 1: with in_channels = out_channels, where an
// identity shortcut fits.
bool has_unit_stride(const BlockSpec& block);

// conv -> norm -> act with names "<prefix><unit>conv", "<prefix><unit>norm", "<prefix><unit>act".
class BlockAssembler {
 public:
  BlockAssembler(GraphBuilder& b, const BlockSpec& block, std::string prefix = "",
                 DropoutKind dropout_kind = DropoutKind::element)
      : b_(b), block_(block), prefix_(std::move(prefix)), dropout_kind_(dropout_kind) {}

  // A "spatial" conv uses the block's kernel, padding and dilation; the others are 1x1 convs
  // (no padding, no dilation). Stride is given explicitly.
  int cna(const std::string& unit, int x, int64_t out, bool spatial, std::vector<int64_t> stride, int64_t groups);
  // The unit's parts, for kinds whose units are not one chain (a sum of normalised branches); norm
  // and act return their input when the block has none (norm: none, act: none).
  int conv(const std::string& unit, int x, int64_t out, bool spatial, std::vector<int64_t> stride, int64_t groups);
  int norm_act(const std::string& unit, int y);
  int norm(const std::string& unit, int y);
  int act(const std::string& unit, int y);
  // The block's dropout (none when its rate is 0), named "<prefix>dropout".
  int dropout(int y);
  // Dropout ends the main path; a residual shortcut is added to it.
  int finish_main_path(int x, int main);

  // For a kind's own ops: the graph, the block (or slot), and an op's name under the prefix.
  GraphBuilder& builder() { return b_; }
  const BlockSpec& block() const { return block_; }
  std::string name(const std::string& op) const { return prefix_ + op; }

 private:
  GraphBuilder& b_;
  const BlockSpec& block_;
  std::string prefix_;
  DropoutKind dropout_kind_;
};

}  // namespace convbench

// graph_outline: the one line under a block's table that says what a variant builds.
#include <gtest/gtest.h>

#include "graph/graph_outline.hpp"
#include "spec/kind_branches.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::seed_block;
using testing::variant;

TEST(GraphOutline, SaysEveryOpOfTheMainPathAndTheShortcut) {
  BlockSpec b = seed_block();
  EXPECT_EQ(graph_outline(build_variant_graph(b, variant("standard"))), "conv 3x3x3 16→32, batch_norm, relu");
  // residual: true with 16 -> 32 channels projects the shortcut, and nothing follows the add: the
  // line must show both, since a user's own block often has a ReLU there.
  b.residual = true;
  EXPECT_EQ(graph_outline(build_variant_graph(b, variant("standard"))),
            "conv 3x3x3 16→32, batch_norm, relu; shortcut: conv 1x1x1 16→32, batch_norm; add(act + shortcut.norm)");
  // Stages by their module names; strides and groups on the convs that have them.
  b.residual = false;
  b.stride = {2, 2, 2};
  VariantSpec bottleneck = variant("bottleneck");
  bottleneck.kind_parameters = BottleneckParameters{.ratio = 2, .groups = 4};
  EXPECT_EQ(graph_outline(build_variant_graph(b, bottleneck)),
            "reduce: conv 1x1x1 16→16, batch_norm, relu; spatial: conv 3x3x3 16→16 /2x2x2 g4, batch_norm, relu; "
            "expand: conv 1x1x1 16→32, batch_norm, relu");
}

TEST(GraphOutline, SaysARepeatedRunOnceWithItsCount) {
  // Seed 003's loop of convs: four slices, four convs, a concat; the concat names its first and
  // last inputs rather than all of them.
  const BlockSpec b = testing::small_block(2, 48, 48, 8);
  VariantSpec branches = variant("branches");
  branches.kind_parameters = BranchesParameters{.count = 4, .branch_out_channels = 12};
  EXPECT_EQ(graph_outline(build_variant_graph(b, branches)),
            "4 × [split: slice; branches: conv 3x3 12→12]; concat(branches.0 … branches.3), batch_norm, relu");
  // Without the split, the four convs read the whole input: one group, its run counted.
  branches.kind_parameters = BranchesParameters{.count = 4, .split_channels = false, .branch_out_channels = 12};
  EXPECT_EQ(graph_outline(build_variant_graph(b, branches)),
            "branches: 4 × conv 3x3 48→12; concat(branches.0 … branches.3), batch_norm, relu");
  // Two branches are said as they are.
  branches.kind_parameters = BranchesParameters{.count = 2, .branch_out_channels = 24};
  EXPECT_EQ(graph_outline(build_variant_graph(b, branches)),
            "split: slice; branches: conv 3x3 24→24; split: slice; branches: conv 3x3 24→24; "
            "concat(branches.0 + branches.1), batch_norm, relu");
}

}  // namespace
}  // namespace convbench

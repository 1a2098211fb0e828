// graph_outline: the one line under a block's table that says what a variant builds.
#include <gtest/gtest.h>

#include "graph/graph_outline.hpp"
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
  bottleneck.ratio = 2;
  bottleneck.groups = 4;
  EXPECT_EQ(graph_outline(build_variant_graph(b, bottleneck)),
            "reduce: conv 1x1x1 16→16, batch_norm, relu; spatial: conv 3x3x3 16→16 /2x2x2 g4, batch_norm, relu; "
            "expand: conv 1x1x1 16→32, batch_norm, relu");
}

}  // namespace
}  // namespace convbench

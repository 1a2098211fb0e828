// The memory model on a hand-worked case: conv(1->2, 3x3, bias) -> BN -> ReLU on a 1x1x4x4 input.
#include <gtest/gtest.h>

#include "analysis/memory_model.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

size_t cat(MemoryCategory c) { return static_cast<size_t>(c); }

TEST(MemoryModel, HandWorkedTrainingStep) {
  BlockSpec b = testing::small_block(2, 1, 2, 4);
  b.batch = 1;
  const Graph g = build_variant_graph(b, b.variants[0]);
  const MemoryPrediction p = predict_memory(g, true);
  // Resident: params 96 B (w 72, bias 8, BN 16), buffers 16, input 64, dy 128.
  EXPECT_EQ(p.resident_bytes, 96 + 16 + 64 + 128);
  // Saved at the end of forward: conv output (BN input) 128, BN mean+invstd 16, ReLU output 128.
  EXPECT_EQ(p.saved_bytes, 272);
  // Peak: during BN backward, with its grad_output (128), its grad-input (128) and BN's
  // parameter gradients (16) alive next to everything saved.
  EXPECT_EQ(p.peak_bytes, 848);
  EXPECT_EQ(p.at_peak[cat(MemoryCategory::parameters)], 96);
  EXPECT_EQ(p.at_peak[cat(MemoryCategory::buffers)], 16);
  EXPECT_EQ(p.at_peak[cat(MemoryCategory::inputs)], 192);
  EXPECT_EQ(p.at_peak[cat(MemoryCategory::saved)], 272);
  EXPECT_EQ(p.at_peak[cat(MemoryCategory::temporaries)], 256);
  EXPECT_EQ(p.at_peak[cat(MemoryCategory::gradients)], 16);
  EXPECT_EQ(p.gradient_bytes, 96);
}

TEST(MemoryModel, InferenceKeepsNothingForBackward) {
  BlockSpec b = testing::small_block(2, 1, 2, 4);
  b.batch = 1;
  b.mode = RunMode::infer;
  const Graph g = build_variant_graph(b, b.variants[0]);
  const MemoryPrediction p = predict_memory(g, false);
  EXPECT_EQ(p.saved_bytes, 0);
  // Resident 96 + 16 + 64; at most two activations (128 each) alive at once.
  EXPECT_EQ(p.peak_bytes, 176 + 256);
}

TEST(MemoryModel, WorkspaceIsTransientAndCounted) {
  BlockSpec b = testing::small_block(2, 1, 2, 4);
  b.batch = 1;
  b.mode = RunMode::infer;
  const Graph g = build_variant_graph(b, b.variants[0]);
  const MemoryPrediction p = predict_memory(
      g, false, [](const Op& op, Phase) { return op.kind == OpKind::conv ? int64_t{1000} : int64_t{0}; });
  // During the conv: resident 176 + its output 128 + workspace 1000.
  EXPECT_EQ(p.peak_bytes, 176 + 128 + 1000);
  EXPECT_EQ(p.peak_by_category[cat(MemoryCategory::workspace)], 1000);
}

}  // namespace
}  // namespace convbench

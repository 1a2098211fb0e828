// Parameter and MAC counts against numbers computed independently (PyTorch modules built with
// the same op sequences), and hand-worked FLOP and byte rules.
#include <gtest/gtest.h>

#include "analysis/variant_analysis.hpp"
#include "graph/checked_math.hpp"
#include "spec/kind_grouped.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::seed_block;
using testing::small_block;
using testing::variant;

VariantAnalysis analyze(const BlockSpec& b, const VariantSpec& v) {
  return analyze_variant(build_variant_graph(b, v), b.mode == RunMode::train);
}

TEST(AnalysisCounts, SeedBlockMatchesPyTorch) {
  const BlockSpec b = seed_block();
  const VariantAnalysis standard = analyze(b, b.variants[0]);
  const VariantAnalysis bottleneck = analyze(b, b.variants[1]);
  const VariantAnalysis separable = analyze(b, b.variants[2]);
  EXPECT_EQ(standard.params, 13920);
  EXPECT_EQ(bottleneck.params, 7872);
  EXPECT_EQ(separable.params, 1088);
  EXPECT_EQ(standard.macs.forward, 2717908992);
  EXPECT_EQ(bottleneck.macs.forward, 1509949440);
  EXPECT_EQ(separable.macs.forward, 185597952);
  // BN running mean + var: 2 per channel of every norm.
  EXPECT_EQ(standard.buffers, 64);
  EXPECT_EQ(bottleneck.buffers, 2 * (16 + 16 + 32));
  EXPECT_EQ(separable.buffers, 2 * (16 + 32));
  // PyTorch's BatchNorm also keeps num_batches_tracked: one element per batch norm, counted apart.
  EXPECT_EQ(standard.buffer_counters, 1);
  EXPECT_EQ(bottleneck.buffer_counters, 3);
  EXPECT_EQ(separable.buffer_counters, 2);
}

TEST(AnalysisCounts, BackwardSkipsGradInputOfTheFirstConvOnly) {
  const BlockSpec b = seed_block();
  const VariantAnalysis standard = analyze(b, b.variants[0]);
  EXPECT_EQ(standard.macs.backward_data, 0);
  EXPECT_EQ(standard.macs.backward_weight, 2717908992);
  const VariantAnalysis bottleneck = analyze(b, b.variants[1]);
  // spatial 6*16*16*27*32^3 + expand 6*32*16*32^3
  EXPECT_EQ(bottleneck.macs.backward_data, 1358954496 + 100663296);
  EXPECT_EQ(bottleneck.macs.backward_weight, 1509949440);
  const VariantAnalysis separable = analyze(b, b.variants[2]);
  EXPECT_EQ(separable.macs.backward_data, 100663296);
  // Depthwise grad-weight is divided by groups like its forward (FlopCounterMode's bug would
  // give 16x 84,934,656 here).
  EXPECT_EQ(separable.macs.backward_weight, 84934656 + 100663296);
}

TEST(AnalysisCounts, InferenceHasNoBackward) {
  BlockSpec b = seed_block();
  b.mode = RunMode::infer;
  const VariantAnalysis a = analyze(b, b.variants[0]);
  EXPECT_EQ(a.macs.backward(), 0);
  EXPECT_EQ(a.flops.backward(), 0);
  EXPECT_EQ(a.bytes_backward, 0);
  // conv 2*MACs + bias (1/elem) + BN inference (2/elem) + ReLU (1/elem); output 6*32*32^3.
  const int64_t out = 6LL * 32 * 32768;
  EXPECT_EQ(a.flops.forward, 2 * 2717908992LL + out + 2 * out + out);
}

TEST(AnalysisCounts, TrainingFlopsFollowTheDocumentedRules) {
  const BlockSpec b = seed_block();
  const VariantAnalysis a = analyze(b, b.variants[0]);
  const int64_t out = 6LL * 32 * 32768;
  EXPECT_EQ(a.flops.forward, 2 * 2717908992LL + out /*bias*/ + 5 * out /*BN train*/ + out /*ReLU*/);
  // Grad-input: ReLU 1, BN 6 per element; the conv's grad-input is skipped.
  EXPECT_EQ(a.flops.backward_data, out + 6 * out);
  // Grad-weight: conv 2*MACs + bias sum, BN affine 3 per element.
  EXPECT_EQ(a.flops.backward_weight, 2 * 2717908992LL + out + 3 * out);
}

TEST(AnalysisCounts, GroupedAndStridedConv) {
  BlockSpec b = small_block(2, 64, 128, 16);
  b.stride = {2, 2};
  VariantSpec g = variant("grouped");
  g.kind_parameters = GroupedParameters{.groups = 8};
  const VariantAnalysis a = analyze(b, g);
  // weight 128 * 64/8 * 9 + bias 128 + BN 256; output 8x8.
  EXPECT_EQ(a.params, 128 * 8 * 9 + 128 + 256);
  EXPECT_EQ(a.macs.forward, 2LL * 128 * 8 * 9 * 64);
}

TEST(AnalysisCounts, ResidualShortcutAddsProjectionWhenShapesChange) {
  BlockSpec b = small_block(2, 16, 32, 8);
  b.residual = true;
  const VariantAnalysis a = analyze(b, b.variants[0]);
  // main conv 32*16*9+32, BN 64, shortcut conv 32*16+32, BN 64
  EXPECT_EQ(a.params, 32 * 16 * 9 + 32 + 64 + 32 * 16 + 32 + 64);
  EXPECT_EQ(a.macs.forward, 2LL * 64 * 32 * 16 * 9 + 2LL * 64 * 32 * 16);
  // Both convs read the block input: neither computes a grad-input.
  EXPECT_EQ(a.macs.backward_data, 0);
}

TEST(AnalysisCounts, BytesCountEveryTensorTouchedOnce) {
  BlockSpec b = small_block(2, 1, 2, 4);
  b.batch = 1;
  b.norm = NormKind::none;
  b.act = ActKind::none;
  const VariantAnalysis a = analyze(b, b.variants[0]);
  // forward: input 16 + output 32 floats + weight 18 + bias 2 = 68 floats.
  EXPECT_EQ(a.bytes_forward, 68 * 4);
  // backward: grad_out 32 + saved input 16 + (weight 18 + bias 2) read and their grads written.
  EXPECT_EQ(a.bytes_backward, (32 + 16 + 2 * 20) * 4);
}

TEST(AnalysisCounts, OverflowIsAnErrorNotAWrap) {
  BlockSpec b = small_block(3, 1 << 20, 1 << 20, 4096);
  b.batch = 1 << 20;
  EXPECT_THROW(analyze(b, b.variants[0]), CountOverflow);
}

}  // namespace
}  // namespace convbench

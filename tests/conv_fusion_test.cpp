// --conv-fusion conv_act (backends/conv_fusion.hpp): which convs take the in-place activation
// after them (the graph's rule every backend shares), and the cpu backend's fused steps (oneDNN
// post-ops) against its unfused ones and the memory model. The cuda backend's fused steps are
// GpuFusion in cuda_backend_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend_registry.hpp"
#include "backends/conv_fusion.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "measure/variant_runner.hpp"
#include "memory_expectations.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

BlockSpec fusion_block(int dims, RunMode mode, MemoryPolicy policy, ActKind act = ActKind::relu) {
  BlockSpec block = testing::small_block(dims, 4, 8, 6);
  block.norm = NormKind::none;  // conv -> activation, the conv keeping its bias
  block.act = act;
  block.mode = mode;
  block.memory_policy.policy = policy;
  return block;
}

TEST(ConvFusionRule, EveryConvTakesTheInPlaceActivationAfterItInEitherMode) {
  EXPECT_EQ(parse_conv_fusion("conv_act"), ConvFusion::conv_act);
  EXPECT_EQ(parse_conv_fusion(to_string(ConvFusion::none)), ConvFusion::none);
  EXPECT_FALSE(parse_conv_fusion("conv_bn"));
  for (int dims : {2, 3})
    for (RunMode mode : {RunMode::infer, RunMode::train})
      for (ActKind act : {ActKind::relu, ActKind::leaky_relu}) {
        const Graph g = build_variant_graph(fusion_block(dims, mode, MemoryPolicy::inplace_act, act),
                                            testing::variant("bottleneck"));
        int taken = 0;
        for (size_t i = 0; i < g.ops.size(); ++i) {
          std::string why_not;
          const std::optional<ConvEpilogue> e = conv_act_fusion(g, static_cast<int>(i), &why_not);
          if (g.ops[i].kind != OpKind::conv) {
            EXPECT_FALSE(e) << g.ops[i].name;
            continue;
          }
          ASSERT_TRUE(e) << g.ops[i].name << ": " << why_not;
          EXPECT_TRUE(why_not.empty());
          EXPECT_TRUE(e->bias);
          EXPECT_EQ(e->act_op, static_cast<int>(i) + 1);
          EXPECT_TRUE(g.ops[i + 1].in_place);
          EXPECT_EQ(e->name(), act == ActKind::relu ? "bias+relu" : "bias+leaky_relu(0.01)");
          EXPECT_EQ(op_index(g, g.ops[i]), static_cast<int>(i));
          ++taken;
        }
        EXPECT_EQ(taken, 3) << "the bottleneck's three convs";
      }
}

TEST(ConvFusionRule, NoFusionSaysWhy) {
  auto why = [](const BlockSpec& block, const char* kind, OpKind conv_kind = OpKind::conv) {
    const Graph g = build_variant_graph(block, testing::variant(kind));
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (g.ops[i].kind == conv_kind) {
        std::string why_not;
        EXPECT_FALSE(conv_act_fusion(g, static_cast<int>(i), &why_not)) << g.ops[i].name;
        EXPECT_TRUE(conv_act_fusion(g, static_cast<int>(i)) == std::nullopt);  // the same answer, no text asked
        return why_not;
      }
    ADD_FAILURE() << "no " << to_string(conv_kind) << " in " << kind;
    return std::string();
  };
  // The default policy: the activation writes a tensor of its own, as in PyTorch eager.
  EXPECT_NE(why(fusion_block(2, RunMode::infer, MemoryPolicy::none), "standard").find("a tensor of its own"),
            std::string::npos);
  // A batch norm between the conv and its activation.
  BlockSpec normed = fusion_block(2, RunMode::infer, MemoryPolicy::inplace_act);
  normed.norm = NormKind::batch;
  EXPECT_NE(why(normed, "standard").find("batch_norm, is not an activation"), std::string::npos);
  // No activation at all.
  BlockSpec linear = fusion_block(2, RunMode::infer, MemoryPolicy::none, ActKind::none);
  EXPECT_NE(why(linear, "standard").find("no activation"), std::string::npos);
  // Not a conv; not an op of the graph.
  const Graph g =
      build_variant_graph(fusion_block(2, RunMode::infer, MemoryPolicy::inplace_act), testing::variant("standard"));
  std::string why_not;
  EXPECT_FALSE(conv_act_fusion(g, 1, &why_not));
  EXPECT_NE(why_not.find("only a conv's forward"), std::string::npos) << why_not;
  EXPECT_FALSE(conv_act_fusion(g, -1, &why_not));
  EXPECT_EQ(why_not, "not an op of the graph");
  EXPECT_FALSE(conv_act_fusion(g, static_cast<int>(g.ops.size())));
  const Op stranger = g.ops[0];
  EXPECT_EQ(op_index(g, stranger), -1);
}

struct Step {
  std::vector<double> output;
  std::vector<std::vector<double>> grads;
};

// One forward (and in training, backward) of the graph on `backend`, from the same seeds.
Step run_step(Backend& backend, const Graph& g, bool training) {
  Executor ex(g, backend, training);
  ModelState s = ex.init_state(5);
  Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  fill_uniform(backend, x, 6);
  Step r;
  r.output = download(backend, ex.forward(s, x));
  if (training) {
    Tensor dy = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
    fill_uniform(backend, dy, 7);
    ex.backward(s, dy);
    for (const Tensor& t : s.grads) r.grads.push_back(download(backend, t));
  }
  return r;
}

// Largest difference relative to the largest value: the fused and unfused primitives may
// accumulate in another order.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return a.size() == b.size() ? diff / std::max(scale, 1e-30) : 1.0;
}

// leaky_relu is the telling case: applied twice (fused and again by its own op) its negative
// outputs would be slope^2 x; not applied (skipped but not fused) they would be x.
TEST(CpuConvFusion, FusedStepsEqualTheUnfusedOnesAndTheMemoryModel) {
  for (int dims : {2, 3})
    for (Layout layout : {Layout::channels_first, Layout::channels_last})
      for (ActKind act : {ActKind::relu, ActKind::leaky_relu})
        for (bool training : {false, true})
          for (const char* kind : {"standard", "bottleneck", "separable"}) {
            BlockSpec block =
                fusion_block(dims, training ? RunMode::train : RunMode::infer, MemoryPolicy::inplace_act, act);
            block.layout = layout;
            const Graph g = build_variant_graph(block, testing::variant(kind));
            SCOPED_TRACE(std::string(kind) + " dims=" + std::to_string(dims) + " " + std::string(to_string(layout)) +
                         (act == ActKind::relu ? " relu" : " leaky_relu") + (training ? " train" : " infer"));
            CpuBackend plain, fused(ConvFusion::conv_act);
            const Step want = run_step(plain, g, training), got = run_step(fused, g, training);
            // Every conv the rule names took its activation, unless the own depthwise kernel ran it.
            int64_t expected = 0;
            for (size_t i = 0; i < g.ops.size(); ++i)
              expected += conv_act_fusion(g, static_cast<int>(i)) && g.ops[i].conv.groups == 1 ? 1 : 0;
            EXPECT_GE(fused.activations_taken(), expected);
            EXPECT_GT(fused.activations_taken(), 0);
            EXPECT_EQ(plain.activations_taken(), 0);
            EXPECT_LT(relative_difference(got.output, want.output), 1e-5);
            ASSERT_EQ(got.grads.size(), want.grads.size());
            for (size_t p = 0; p < got.grads.size(); ++p)
              EXPECT_LT(relative_difference(got.grads[p], want.grads[p]), 1e-4) << g.params[p].name;
            // Fusing changes no byte: the measured memory is still the model's, category by category.
            CpuBackend measured(ConvFusion::conv_act);
            testing::expect_measured_equals_predicted(measured, g, training);
          }
}

TEST(CpuConvFusion, TheOptionIsCheckedPerDevice) {
  BackendOptions options;
  options.conv_fusion = "conv_bn";
  EXPECT_THROW(make_backend("cpu", options), std::invalid_argument);
  options.conv_fusion = "conv_act";
  EXPECT_NO_THROW(make_backend("cpu", options));
  try {
    make_backend("reference", options);
    ADD_FAILURE() << "the reference backend took --conv-fusion conv_act";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the reference backend runs every op apart"), std::string::npos) << e.what();
  }
  try {  // checked before any GPU is looked for
    make_backend("cuda", options);
    ADD_FAILURE() << "cuda took --conv-fusion conv_act on the legacy API";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("add --cudnn-api graph"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convbench

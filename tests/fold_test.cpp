// Folding (lib/transforms/): the linear-map machinery on constructed graphs. Each folded graph is
// checked against its source on the reference backend in float64 with random weights, batch norm
// statistics and inputs (prove_fold), and its shape against the closed form: seed 002's
// SubtractedConv is conv(x, [(D - I) o P ; L o P], stride s, dilation s, padding s * (k / 2)).
#include <gtest/gtest.h>

#include <random>

#include "ops/fold_eval.hpp"
#include "ops/graph_builder.hpp"
#include "pipeline/analyze.hpp"
#include "pipeline/fold_proof.hpp"
#include "spec/spec_loader.hpp"
#include "transforms/fold_graph.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

ConvAttrs conv(int64_t out, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
               std::vector<int64_t> d, int64_t groups, bool bias) {
  ConvAttrs a;
  a.out_channels = out;
  a.kernel = std::move(k);
  a.stride = std::move(s);
  a.padding = std::move(p);
  a.dilation = std::move(d);
  a.groups = groups;
  a.bias = bias;
  return a;
}

ConvAttrs conv2d(int64_t out, int64_t k, int64_t s, int64_t p, int64_t groups = 1, bool bias = false, int64_t d = 1) {
  return conv(out, {k, k}, {s, s}, {p, p}, {d, d}, groups, bias);
}

TensorDesc input(std::vector<int64_t> shape) { return TensorDesc{std::move(shape), DType::float64}; }

// Seed 002's SubtractedConv: p = 1x1 (stride s), d = depthwise kxk - p, l = kxk of p, cat(d, l).
Graph subtracted(int64_t k, int64_t s, int64_t size = 11, int64_t in = 4, int64_t half = 3) {
  GraphBuilder b("subtracted", input({2, in, size, size}));
  const int p = b.conv("p", b.input(), conv2d(half, 1, s, 0));
  const int depth = b.conv("depth", p, conv2d(half, k, 1, k / 2, half));
  const int d = b.sub("d", depth, p);
  const int l = b.conv("low_pass", p, conv2d(half, k, 1, k / 2));
  return b.finish(b.concat("x", {d, l}));
}

const Op& only_conv(const Graph& g) {
  EXPECT_EQ(g.ops.size(), 1u);
  return g.ops.at(0);
}

struct SubtractedCase {
  int64_t k, s;
};

class FoldSubtracted : public ::testing::TestWithParam<SubtractedCase> {};

TEST_P(FoldSubtracted, IsOneConvWithStrideAsDilationAndEqualsTheSource) {
  const auto [k, s] = GetParam();
  const Graph src = subtracted(k, s);
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  const Op& c = only_conv(r.graph);
  EXPECT_EQ(c.kind, OpKind::conv);
  EXPECT_EQ(c.conv.kernel, (std::vector<int64_t>{k, k}));
  EXPECT_EQ(c.conv.stride, (std::vector<int64_t>{s, s}));
  EXPECT_EQ(c.conv.dilation, (std::vector<int64_t>{s, s}));
  EXPECT_EQ(c.conv.padding, (std::vector<int64_t>{s * (k / 2), s * (k / 2)}));
  EXPECT_EQ(c.conv.groups, 1);
  EXPECT_FALSE(c.conv.bias);
  EXPECT_EQ(r.graph.desc(r.graph.output).shape, src.desc(src.output).shape);
  ASSERT_EQ(r.convs.size(), 1u);
  EXPECT_EQ(r.convs[0].ops, (std::vector<std::string>{"p", "depth", "d", "low_pass", "x"}));
  const FoldProof proof = prove_fold(src, r.graph, false);
  EXPECT_LT(proof.output_error, kFoldTolerance) << "k " << k << " s " << s;
}

INSTANTIATE_TEST_SUITE_P(Seed002, FoldSubtracted,
                         ::testing::Values(SubtractedCase{3, 1}, SubtractedCase{3, 2}, SubtractedCase{7, 2},
                                           SubtractedCase{5, 3}),
                         [](const auto& info) {
                           return "k" + std::to_string(info.param.k) + "_s" + std::to_string(info.param.s);
                         });

// RepVGG: 3x3 + BN, 1x1 + BN and an identity BN, added, then ReLU: in inference one 3x3 conv
// with bias, then the ReLU.
Graph repvgg(int64_t c = 4, int64_t size = 6) {
  GraphBuilder b("repvgg", input({2, c, size, size}));
  const int x = b.input();
  const int a = b.batch_norm("dense.bn", b.conv("dense.conv", x, conv2d(c, 3, 1, 1)));
  const int p = b.batch_norm("pointwise.bn", b.conv("pointwise.conv", x, conv2d(c, 1, 1, 0)));
  const int i = b.batch_norm("identity", x);
  return b.finish(b.relu("act", b.add("sum2", b.add("sum", a, p), i)));
}

TEST(Fold, RepVggIsOne3x3ConvWithBiasThenTheRelu) {
  const Graph src = repvgg();
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  ASSERT_EQ(r.graph.ops.size(), 2u);
  const Op& c = r.graph.ops[0];
  EXPECT_EQ(c.kind, OpKind::conv);
  EXPECT_EQ(c.conv.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(c.conv.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(c.conv.bias);
  EXPECT_EQ(r.graph.ops[1].kind, OpKind::relu);
  EXPECT_LT(prove_fold(src, r.graph, false).output_error, kFoldTolerance);
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_EQ(r.kept[0], "relu 'act' is not linear");
}

TEST(Fold, BatchNormInTrainingIsRefusedWithTheReason) {
  try {
    fold_graph(repvgg(), {FoldMode::once, true});
    FAIL() << "folded a training batch norm";
  } catch (const FoldRefused& e) {
    EXPECT_NE(std::string(e.what()).find("batch_norm 'dense.bn' in training normalises by the batch's statistics"),
              std::string::npos)
        << e.what();
  }
}

TEST(Fold, BatchNormFoldsIntoThePrecedingConv) {
  GraphBuilder b("conv-bn", input({2, 3, 5, 5}));
  const Graph src = b.finish(b.batch_norm("bn", b.conv("conv", b.input(), conv2d(4, 3, 2, 1, 1, true))));
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  const Op& c = only_conv(r.graph);
  EXPECT_EQ(c.conv.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(c.conv.bias);
  EXPECT_LT(prove_fold(src, r.graph, false).output_error, kFoldTolerance);
}

// Two padded 3x3 convs are not one 5x5 conv at the borders: the transform refuses and says why.
TEST(Fold, PaddedConvAfterPaddedConvIsRefusedAtTheBorder) {
  GraphBuilder b("two-3x3", input({1, 2, 6, 6}));
  const int a = b.conv("a", b.input(), conv2d(2, 3, 1, 1));
  const Graph src = b.finish(b.conv("b", a, conv2d(2, 3, 1, 1)));
  try {
    fold_graph(src, {FoldMode::once, false});
    FAIL() << "folded across a padded border";
  } catch (const FoldRefused& e) {
    EXPECT_NE(std::string(e.what()).find("a padded conv after a padded conv is not one conv at the borders"),
              std::string::npos)
        << e.what();
  }
}

// Without padding, a chain composes: kernels add (3 + 3 - 1), strides multiply, and a dilation
// after a stride becomes the product.
TEST(Fold, ChainsWithoutPaddingCompose) {
  GraphBuilder b("chain", input({2, 3, 17, 15}));
  const int a = b.conv("a", b.input(), conv2d(4, 3, 1, 0, 1, true));
  const Graph src = b.finish(b.conv("b", a, conv2d(5, 3, 1, 0, 1, true)));
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  const Op& c = only_conv(r.graph);
  EXPECT_EQ(c.conv.kernel, (std::vector<int64_t>{5, 5}));
  EXPECT_TRUE(c.conv.bias);
  EXPECT_LT(prove_fold(src, r.graph, false).output_error, kFoldTolerance);

  GraphBuilder b2("strided-chain", input({1, 2, 19, 16}));
  const int s = b2.conv("s", b2.input(), conv2d(3, 3, 2, 0));
  const Graph src2 = b2.finish(b2.conv("t", s, conv(2, {3, 2}, {1, 2}, {0, 0}, {2, 1}, 1, false)));
  const FoldResult r2 = fold_graph(src2, {FoldMode::once, false});
  const Op& c2 = only_conv(r2.graph);
  // dim 0: taps 2 * 2 * q + t, t < 3: 0..10, every offset (kernel 11); stride 2 * 1.
  // dim 1: taps 2 * 1 * q + t: 0..4 (kernel 5); stride 2 * 2.
  EXPECT_EQ(c2.conv.kernel, (std::vector<int64_t>{11, 5}));
  EXPECT_EQ(c2.conv.stride, (std::vector<int64_t>{2, 4}));
  EXPECT_LT(prove_fold(src2, r2.graph, false).output_error, kFoldTolerance);
}

// A bias passes through a conv without padding; a padded conv would read a zero where the
// biased value is not zero, and is refused.
TEST(Fold, BiasThroughUnpaddedConvFoldsThroughPaddedConvIsRefused) {
  GraphBuilder b("bias-unpadded", input({1, 2, 7, 7}));
  const int a = b.conv("a", b.input(), conv2d(3, 1, 1, 0, 1, true));
  const Graph src = b.finish(b.conv("b", a, conv2d(2, 3, 1, 0)));
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  EXPECT_TRUE(only_conv(r.graph).conv.bias);
  EXPECT_LT(prove_fold(src, r.graph, false).output_error, kFoldTolerance);

  GraphBuilder b2("bias-padded", input({1, 2, 7, 7}));
  const int a2 = b2.conv("a", b2.input(), conv2d(3, 1, 1, 0, 1, true));
  const Graph src2 = b2.finish(b2.conv("b", a2, conv2d(2, 3, 1, 1)));
  try {
    fold_graph(src2, {FoldMode::once, false});
    FAIL() << "folded a bias through a zero padding";
  } catch (const FoldRefused& e) {
    EXPECT_NE(std::string(e.what()).find("reads the zero padding around 'a', which has a constant term"),
              std::string::npos)
        << e.what();
  }
}

// Branches on channel slices, concatenated: one grouped conv (seed 003).
TEST(Fold, BranchesOnChannelSlicesAreOneGroupedConv) {
  GraphBuilder b("branches", input({2, 8, 5, 5}));
  std::vector<int> outs;
  for (int i = 0; i < 4; ++i) {
    Op s;
    s.kind = OpKind::slice;
    s.name = "slice" + std::to_string(i);
    s.inputs = {b.input()};
    s.slice = {2 * i, 2};
    const int x = b.add(std::move(s));
    outs.push_back(b.conv("branch" + std::to_string(i), x, conv2d(3, 3, 1, 1, 1, true)));
  }
  const Graph src = b.finish(b.concat("cat", outs));
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  const Op& c = only_conv(r.graph);
  EXPECT_EQ(c.conv.groups, 4);
  EXPECT_EQ(c.conv.out_channels, 12);
  EXPECT_LT(prove_fold(src, r.graph, false).output_error, kFoldTolerance);
}

// Branches reading the whole input, concatenated: one conv with every branch's output channels.
TEST(Fold, BranchesOfTheSameInputAreOneWideConv) {
  GraphBuilder b("wide", input({1, 3, 6, 6}));
  const int a = b.conv("a", b.input(), conv2d(2, 3, 1, 1));
  const int c = b.conv("c", b.input(), conv2d(2, 1, 1, 0));
  const Graph src = b.finish(b.concat("cat", {a, c}));
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  const Op& f = only_conv(r.graph);
  EXPECT_EQ(f.conv.out_channels, 4);
  EXPECT_EQ(f.conv.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(f.conv.groups, 1);
  EXPECT_LT(prove_fold(src, r.graph, false).output_error, kFoldTolerance);
}

// A non-linear op splits the graph: what is before and after it folds separately.
TEST(Fold, NonLinearOpsStayBetweenFoldedRegions) {
  GraphBuilder b("two-regions", input({1, 3, 8, 8}));
  const int a = b.conv("a", b.input(), conv2d(4, 1, 1, 0));
  const int c = b.conv("c", a, conv2d(4, 3, 1, 1, 4));
  const int r0 = b.relu("r", c);
  const int e = b.conv("e", r0, conv2d(4, 1, 1, 0));
  const Graph src = b.finish(b.add("sum", b.conv("f", r0, conv2d(4, 3, 1, 1)), e));
  const FoldResult r = fold_graph(src, {FoldMode::once, false});
  ASSERT_EQ(r.graph.ops.size(), 3u);  // conv, relu, conv
  EXPECT_EQ(r.graph.ops[1].kind, OpKind::relu);
  EXPECT_EQ(r.convs.size(), 2u);
  EXPECT_LT(prove_fold(src, r.graph, false).output_error, kFoldTolerance);
}

TEST(Fold, NothingToFoldIsRefused) {
  GraphBuilder b("alone", input({1, 3, 8, 8}));
  const Graph src = b.finish(b.relu("r", b.conv("a", b.input(), conv2d(4, 3, 1, 1))));
  EXPECT_THROW(fold_graph(src, {FoldMode::once, false}), FoldRefused);
}

// fold: online keeps the branch weights as parameters of one folded_conv op: its output and
// every weight's gradient equal the source's.
TEST(FoldOnline, SubtractedConvGradientsEqualTheSources) {
  for (const SubtractedCase& c : {SubtractedCase{3, 1}, SubtractedCase{3, 2}, SubtractedCase{7, 2}}) {
    const Graph src = subtracted(c.k, c.s);
    const FoldResult r = fold_graph(src, {FoldMode::online, true});
    const Op& f = only_conv(r.graph);
    EXPECT_EQ(f.kind, OpKind::folded_conv);
    ASSERT_EQ(r.graph.params.size(), 3u);
    EXPECT_EQ(r.graph.params[0].name, "p.weight");
    const FoldProof proof = prove_fold(src, r.graph, true);
    EXPECT_LT(proof.output_error, kFoldTolerance);
    EXPECT_GE(proof.gradient_error, 0.0);
    EXPECT_LT(proof.gradient_error, kFoldTolerance) << "k " << c.k << " s " << c.s;
  }
}

TEST(FoldOnline, BatchNormIsNotFoldedOnline) {
  try {
    fold_graph(repvgg(), {FoldMode::online, false});
    FAIL();
  } catch (const FoldRefused& e) {
    EXPECT_NE(std::string(e.what()).find("OREPA replaces a branch's batch norm by a linear scaling"), std::string::npos)
        << e.what();
  }
}

// The adjoint of the program against central finite differences of <weight, G>, in double.
TEST(FoldOnline, AdjointMatchesFiniteDifferences) {
  const Graph src = subtracted(3, 2, 9, 3, 2);
  const FoldResult r = fold_graph(src, {FoldMode::online, true});
  const FoldProgram& p = *r.graph.ops.at(0).fold;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> ops;
  for (const FoldOperand& o : p.operands) {
    ops.emplace_back(static_cast<size_t>(o.numel()));
    for (double& x : ops.back()) x = u(rng);
  }
  int64_t wn = 1;
  for (int64_t s : p.weight_shape()) wn *= s;
  std::vector<double> g(static_cast<size_t>(wn));
  for (double& x : g) x = u(rng);
  const FoldLayout layout(p);
  std::vector<double> regs(static_cast<size_t>(layout.elements)), gregs(regs.size()), w(g.size());
  auto pointers = [&] {
    std::vector<const double*> v;
    for (auto& o : ops) v.push_back(o.data());
    return v;
  };
  auto objective = [&] {
    fold_forward<double>(p, pointers(), regs.data(), w.data(), nullptr);
    double s = 0;
    for (size_t i = 0; i < w.size(); ++i) s += w[i] * g[i];
    return s;
  };
  std::vector<std::vector<double>> grads;
  std::vector<double*> gp;
  for (auto& o : ops) grads.emplace_back(o.size());
  for (auto& x : grads) gp.push_back(x.data());
  fold_run_steps(p, pointers(), regs.data());
  fold_backward<double>(p, pointers(), regs.data(), gregs.data(), g.data(), nullptr, gp);
  for (size_t k = 0; k < ops.size(); ++k)
    for (size_t i = 0; i < ops[k].size(); i += 3) {
      const double h = 1e-6, keep = ops[k][i];
      ops[k][i] = keep + h;
      const double up = objective();
      ops[k][i] = keep - h;
      const double down = objective();
      ops[k][i] = keep;
      EXPECT_NEAR(grads[k][i], (up - down) / (2 * h), 1e-7) << p.operands[k].name << "[" << i << "]";
    }
}

// ---- through the spec: kind folded and kind branches ------------------------------------------

const VariantSpec& variant_named(const BlockSpec& b, const std::string& name) {
  for (const VariantSpec& v : b.variants)
    if (v.name == name) return v;
  throw std::runtime_error("no variant " + name);
}

// Seed 003: 12 branches on channel slices fold into one grouped conv (online in training, once
// in inference), and the BN and ReLU after the concatenation stay.
TEST(FoldSpec, BranchesFoldIntoOneGroupedConv) {
  const Spec spec = parse_spec_text(
      "defaults: {batch: 2, size: 6, in_channels: 24, out_channels: 36, bias: false}\n"
      "blocks:\n"
      "  - name: train\n"
      "    variants: [{kind: branches, name: loop, count: 12}, {kind: folded, of: loop}]\n"
      "  - name: infer\n"
      "    mode: infer\n"
      "    variants: [{kind: branches, name: loop, count: 12}, {kind: folded, of: loop}]\n",
      "b.yaml");
  const BlockSpec& train = spec.blocks.at(0);
  const Graph loop = build_variant_graph(train, variant_named(train, "loop"));
  EXPECT_EQ(loop.ops.size(), 12u + 12u + 3u);  // slices, convs, concat, norm, act
  const Graph online = build_variant_graph(train, variant_named(train, "online-loop"));
  ASSERT_EQ(online.ops.size(), 3u);
  EXPECT_EQ(online.ops[0].kind, OpKind::folded_conv);
  EXPECT_EQ(online.ops[0].conv.groups, 12);
  EXPECT_EQ(online.ops[1].kind, OpKind::batch_norm);
  EXPECT_EQ(online.params.size(), 12u + 2u);  // the 12 branch weights (trained), the BN's affine
  EXPECT_EQ(online.params[0].name, "branches.0.weight");

  const BlockSpec& infer = spec.blocks.at(1);
  const Graph once = build_variant_graph(infer, variant_named(infer, "folded-loop"));
  ASSERT_EQ(once.ops.size(), 2u);  // the BN folds into the grouped conv in inference
  EXPECT_EQ(once.ops[0].kind, OpKind::conv);
  EXPECT_EQ(once.ops[0].conv.groups, 12);
  EXPECT_TRUE(once.ops[0].conv.bias);

  // analyze proves every folded row (float64, reference backend) and records what it folds.
  const ResultSet rows = analyze_spec(spec);
  for (const ResultRow& r : rows.rows) {
    if (r.kind != "folded") continue;
    ASSERT_TRUE(r.fold.has_value()) << r.variant;
    EXPECT_EQ(r.fold->source, "loop");
    EXPECT_LT(r.fold->output_error, kFoldTolerance);
    EXPECT_EQ(r.fold->source_ops, 27);
    ASSERT_EQ(r.fold->convs.size(), 1u);
    EXPECT_EQ(r.fold->convs[0].groups, 12);
    if (r.mode == "train") {
      EXPECT_GE(r.fold->gradient_error, 0.0);
      EXPECT_LT(r.fold->gradient_error, kFoldTolerance);
      EXPECT_EQ(r.fold->fold, "online");
      EXPECT_EQ(r.fold->trained_params, 12 * 3 * 2 * 9 + 2 * 36);
      EXPECT_EQ(r.params, r.fold->trained_params);  // online: what trains is the source's weights
    } else {
      EXPECT_EQ(r.fold->fold, "once");
      EXPECT_EQ(r.fold->kernel_params, 36 * 2 * 9 + 36);  // one grouped 3x3 conv with its bias
    }
  }
}

TEST(FoldSpec, NothingToFoldIsALocatedError) {
  const Spec spec = parse_spec_text(
      "blocks:\n"
      "  - {name: b, batch: 2, size: 6, in_channels: 4, out_channels: 4,\n"
      "     variants: [standard, {kind: folded, of: standard}]}\n",
      "n.yaml");
  try {
    build_variant_graph(spec.blocks[0], spec.blocks[0].variants[1]);
    FAIL() << "folded a lone conv";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "n.yaml:3:27: blocks[0].variants[1]: cannot fold \"standard\" (fold: online): nothing to fold: "
              "batch_norm 'norm' in training normalises by the batch's statistics: not a fixed linear map (it folds "
              "in inference: mode: infer); relu 'act' is not linear");
  }
}

}  // namespace
}  // namespace convbench

// The CUDA backend's depthwise convolution kernels without a GPU: their per-element arithmetic
// (kernels/depthwise_conv_math.hpp, the functions the kernels' threads call) run here on the CPU
// for every element of every depthwise case of the shared op catalogue, in both layouts and in
// the kernels' own decomposition (the same unrolled kernel sizes, the weight gradient in the same
// chunks and tap groups), against the reference backend; the chunk plan; which convs take the own
// kernels under each `--depthwise-conv`; and their workspace. On a GPU, GpuDepthwise in
// cuda_backend_test.cpp runs the kernels themselves.
#include <gtest/gtest.h>

#if CONVBENCH_WITH_CUDA

#include <cmath>
#include <string>
#include <vector>

#include "../kernels/depthwise_conv_math.hpp"  // the repo root is not on the tests' include path
#include "backends/cuda/depthwise_conv_cuda.hpp"
#include "backends/reference/reference_backend.hpp"
#include "reference_op_harness.hpp"

namespace convbench::cuda {
namespace {

using kernels::DepthwiseShape;
using kernels::DwPosition;

// Logical (n, c, spatial) values, as the harness holds them, in the memory order of `layout`.
std::vector<float> in_memory_order(const std::vector<double>& logical, const TensorDesc& d) {
  std::vector<float> out(logical.size());
  const int64_t n = d.batch(), c = d.channels(), s = d.spatial_size();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t k = 0; k < s; ++k) {
        const int64_t from = (i * c + j) * s + k;
        const int64_t to = d.layout == Layout::channels_last ? (i * s + k) * c + j : from;
        out[static_cast<size_t>(to)] = static_cast<float>(logical[static_cast<size_t>(from)]);
      }
  return out;
}

std::vector<double> to_logical(const std::vector<float>& memory, const TensorDesc& d) {
  std::vector<double> out(memory.size());
  const int64_t n = d.batch(), c = d.channels(), s = d.spatial_size();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t k = 0; k < s; ++k) {
        const int64_t to = (i * c + j) * s + k;
        const int64_t from = d.layout == Layout::channels_last ? (i * s + k) * c + j : to;
        out[static_cast<size_t>(to)] = memory[static_cast<size_t>(from)];
      }
  return out;
}

std::vector<float> as_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// What the three kernels compute, element by element, through the same dispatch and
// decomposition as kernels/depthwise_conv.cu's launches.
struct Emulated {
  std::vector<float> y, dx, dw;
};

Emulated emulate(const DepthwiseShape& s, const std::vector<float>& x, const std::vector<float>& w,
                 const std::vector<float>* bias, const std::vector<float>& dy) {
  Emulated e;
  const int k_count = s.out_channels(), taps = s.taps();
  e.y.resize(dy.size());
  e.dx.resize(x.size());
  e.dw.assign(static_cast<size_t>(k_count * taps), 0.0f);
  const kernels::DepthwiseWeightGradPlan plan = kernels::depthwise_weight_grad_plan(s);
  kernels::with_depthwise_extents(s, [&](auto kd, auto kh, auto kw) {
    constexpr int KD = decltype(kd)::value, KH = decltype(kh)::value, KW = decltype(kw)::value;
    constexpr int Taps = KD > 0 ? KD * KH * KW : 1;
    EXPECT_EQ(plan.taps_per_group, Taps);
    for (size_t p = 0; p < e.y.size(); ++p) {
      const DwPosition o = kernels::dw_position(static_cast<int>(p), k_count, s.out, s.channels_last);
      e.y[p] = kernels::depthwise_output<KD, KH, KW>(s, x.data(), w.data(), bias ? bias->data() : nullptr, o);
    }
    for (size_t p = 0; p < e.dx.size(); ++p) {
      const DwPosition i = kernels::dw_position(static_cast<int>(p), s.c, s.in, s.channels_last);
      e.dx[p] = kernels::depthwise_grad_input<KD, KH, KW>(s, w.data(), dy.data(), i);
    }
    // Stage 1 per (chunk, channel, tap group): each of the block's row lanes adds its rows in
    // order; stage 2 adds the chunks in double.
    const int lanes = s.channels_last ? 8 : 256;
    std::vector<double> total(e.dw.size(), 0.0);
    for (int split = 0; split < plan.splits; ++split)
      for (int k = 0; k < k_count; ++k)
        for (int group = 0; group < plan.tap_groups; ++group) {
          float chunk[Taps] = {};
          for (int lane = 0; lane < lanes; ++lane) {
            float acc[Taps] = {};
            const int64_t begin = int64_t{split} * plan.rows_per_split;
            const int64_t end = std::min<int64_t>(plan.rows, begin + plan.rows_per_split);
            for (int64_t row = begin + lane; row < end; row += lanes)
              kernels::depthwise_grad_weight_terms<KD, KH, KW, Taps>(s, x.data(), dy.data(), k, static_cast<int>(row),
                                                                     group * Taps, acc);
            for (int j = 0; j < Taps; ++j) chunk[j] += acc[j];
          }
          for (int j = 0; j < Taps; ++j) total[static_cast<size_t>(k * taps + group * Taps + j)] += chunk[j];
        }
    for (size_t i = 0; i < total.size(); ++i) e.dw[i] = static_cast<float>(total[i]);
  });
  return e;
}

std::vector<reftest::OpCase> depthwise_cases() {
  std::vector<reftest::OpCase> out;
  for (const reftest::OpCase& c : reftest::op_cases()) {
    const Graph g = reftest::build_case(c, DType::float32, Layout::channels_first);
    if (is_depthwise_conv(g, g.ops.back())) out.push_back(c);
  }
  return out;
}

TEST(DepthwiseConvMath, TheCatalogueHasDepthwiseCasesOfEveryKernelPath) {
  // 2-D and 3-D, unrolled and generic extents, a channel multiplier, a frozen conv.
  bool unrolled_2d = false, unrolled_3d = false, generic = false, multiplier = false, frozen = false;
  for (const reftest::OpCase& c : depthwise_cases()) {
    const Graph g = reftest::build_case(c, DType::float32, Layout::channels_first);
    const DepthwiseShape s = depthwise_shape(g, g.ops.back());
    const bool rolled = kernels::depthwise_weight_grad_plan(s).taps_per_group == 1;
    unrolled_2d |= !rolled && s.kernel[0] == 1;
    unrolled_3d |= !rolled && s.kernel[0] == 3;
    generic |= rolled;
    multiplier |= s.multiplier > 1;
    frozen |= g.ops.back().conv.frozen;
  }
  EXPECT_TRUE(unrolled_2d && unrolled_3d && generic && multiplier && frozen)
      << unrolled_2d << unrolled_3d << generic << multiplier << frozen;
}

TEST(DepthwiseConvMath, EveryDepthwiseCaseMatchesTheReferenceInBothLayouts) {
  ReferenceBackend reference;
  for (const reftest::OpCase& c : depthwise_cases())
    for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
      const Graph g = reftest::build_case(c, DType::float32, layout);
      const Op& op = g.ops.back();
      SCOPED_TRACE(c.name + " " + std::string(to_string(layout)));
      reftest::OpHarness h(reference, g, 7);
      const std::vector<double> y_ref = h.forward(true);
      const std::vector<double> dy = reftest::random_values(y_ref.size(), 99);
      const reftest::OpGradients grads = h.backward(dy);

      const DepthwiseShape s = depthwise_shape(g, op);
      const TensorDesc& xd = g.desc(op.inputs[0]);
      const TensorDesc& yd = g.desc(op.output);
      // A frozen conv's weight and bias are buffers.
      const std::vector<std::vector<double>>& weights = op.conv.frozen ? h.buffers : h.params;
      const std::vector<float> bias = op.conv.bias ? as_floats(weights.at(1)) : std::vector<float>{};
      const Emulated e = emulate(s, in_memory_order(h.inputs[0], xd), as_floats(weights.at(0)),
                                 op.conv.bias ? &bias : nullptr, in_memory_order(dy, yd));
      EXPECT_LT(relative_error(to_logical(e.y, yd), y_ref), 1e-6);
      ASSERT_TRUE(grads.inputs.at(0).has_value());
      EXPECT_LT(relative_error(to_logical(e.dx, xd), *grads.inputs[0]), 1e-6);
      if (!op.conv.frozen) {
        std::vector<double> dw(e.dw.begin(), e.dw.end());
        EXPECT_LT(relative_error(dw, grads.params.at(0)), 1e-6);
      }
    }
}

// The seed block's separable conv (6x16x32^3, 3x3x3, channels-first): 16 channel blocks of one
// tap group, 64 chunks of 3072 rows (12 per thread) make the 1024 blocks the plan aims for.
TEST(DepthwiseConvMath, TheWeightGradientPlanFillsTheGpuAndCoversEveryRowOnce) {
  DepthwiseShape s;
  s.n = 6;
  s.c = 16;
  s.in = s.out = {{32, 32, 32}};
  s.kernel = {{3, 3, 3}};
  s.stride = s.dilation = {{1, 1, 1}};
  s.padding = {{1, 1, 1}};
  kernels::DepthwiseWeightGradPlan p = kernels::depthwise_weight_grad_plan(s);
  EXPECT_EQ(p.taps_per_group, 27);
  EXPECT_EQ(p.tap_groups, 1);
  EXPECT_EQ(p.rows, 6 * 32768);
  EXPECT_EQ(p.splits, 64);
  EXPECT_EQ(p.rows_per_split, 3072);
  EXPECT_EQ(kernels::depthwise_workspace_bytes(s, true), 64 * 16 * 27 * 4);
  EXPECT_EQ(kernels::depthwise_workspace_bytes(s, false), 0);

  // Channels-last: one tile of 32 channels, so the chunk count is capped at 256.
  s.channels_last = true;
  p = kernels::depthwise_weight_grad_plan(s);
  EXPECT_EQ(p.splits, 256);
  EXPECT_EQ(p.rows_per_split, 768);

  // A 7x5 kernel is not unrolled: 35 tap groups of one tap each.
  s.channels_last = false;
  s.kernel = {{1, 7, 5}};
  p = kernels::depthwise_weight_grad_plan(s);
  EXPECT_EQ(p.taps_per_group, 1);
  EXPECT_EQ(p.tap_groups, 35);

  // Small problems: at least 8 rows per thread, so one chunk; chunks never leave a row out.
  for (int n : {1, 2, 3, 7})
    for (bool cl : {false, true}) {
      s.n = n;
      s.out = {{1, 9, 13}};
      s.channels_last = cl;
      p = kernels::depthwise_weight_grad_plan(s);
      EXPECT_GE(int64_t{p.splits} * p.rows_per_split, p.rows);
      EXPECT_LT(int64_t{p.splits - 1} * p.rows_per_split, p.rows);
      EXPECT_GE(p.rows_per_split, std::min(p.rows, cl ? 64 : 2048));
    }
}

TEST(DepthwiseConvPaths, WhoRunsADepthwiseConvUnderEachChoice) {
  for (DepthwiseConvPath path : {DepthwiseConvPath::automatic, DepthwiseConvPath::own, DepthwiseConvPath::cudnn})
    EXPECT_EQ(parse_depthwise_conv_path(to_string(path)), path);
  EXPECT_FALSE(parse_depthwise_conv_path("fastest"));
  auto graph = [](std::vector<int64_t> shape, Layout layout, int64_t out, int64_t groups, bool transposed) {
    GraphBuilder b("g", TensorDesc{shape, DType::float32, layout});
    const std::vector<int64_t> k(shape.size() - 2, 3), one(shape.size() - 2, 1), zero(shape.size() - 2, 0);
    const ConvAttrs a =
        reftest::conv_attrs(out, k, one, one, one, groups, true, transposed ? zero : std::vector<int64_t>{});
    return b.finish(transposed ? b.conv_transpose("c", b.input(), a) : b.conv("c", b.input(), a));
  };
  const Graph cf3 = graph({1, 4, 6, 6, 6}, Layout::channels_first, 8, 4, false);
  const Graph cl2 = graph({1, 4, 6, 6}, Layout::channels_last, 4, 4, false);
  const Graph grouped = graph({1, 4, 6, 6}, Layout::channels_first, 4, 2, false);
  const Graph transposed = graph({1, 4, 6, 6}, Layout::channels_first, 4, 4, true);
  EXPECT_TRUE(is_depthwise_conv(cf3, cf3.ops.back()));
  EXPECT_TRUE(is_depthwise_conv(cl2, cl2.ops.back()));
  EXPECT_FALSE(is_depthwise_conv(grouped, grouped.ops.back()));
  EXPECT_FALSE(is_depthwise_conv(transposed, transposed.ops.back()));
  // auto: channels-first to the own kernels, channels-last to cuDNN (PyTorch eager's dispatch).
  EXPECT_TRUE(runs_own_depthwise(cf3, cf3.ops.back(), DepthwiseConvPath::automatic));
  EXPECT_FALSE(runs_own_depthwise(cl2, cl2.ops.back(), DepthwiseConvPath::automatic));
  EXPECT_TRUE(runs_own_depthwise(cl2, cl2.ops.back(), DepthwiseConvPath::own));
  EXPECT_FALSE(runs_own_depthwise(cf3, cf3.ops.back(), DepthwiseConvPath::cudnn));
  EXPECT_FALSE(runs_own_depthwise(grouped, grouped.ops.back(), DepthwiseConvPath::own));
  // The multiplier and the padded depth of a 2-D problem.
  const DepthwiseShape s3 = depthwise_shape(cf3, cf3.ops.back());
  EXPECT_EQ(s3.multiplier, 2);
  EXPECT_EQ(s3.taps(), 27);
  const DepthwiseShape s2 = depthwise_shape(cl2, cl2.ops.back());
  EXPECT_EQ(s2.kernel[0], 1);
  EXPECT_EQ(s2.in[0], 1);
  EXPECT_EQ(s2.padding[0], 0);
  EXPECT_TRUE(s2.channels_last);
  // Forward needs no workspace; backward needs the chunk sums, none when frozen.
  EXPECT_EQ(own_depthwise_workspace_bytes(cf3, cf3.ops.back(), Phase::forward), 0);
  EXPECT_GT(own_depthwise_workspace_bytes(cf3, cf3.ops.back(), Phase::backward), 0);
  Op frozen = cf3.ops.back();
  frozen.conv.frozen = true;
  EXPECT_EQ(own_depthwise_workspace_bytes(cf3, frozen, Phase::backward), 0);
}

}  // namespace
}  // namespace convbench::cuda

#endif  // CONVBENCH_WITH_CUDA

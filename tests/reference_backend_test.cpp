// The reference backend's forward semantics against hand-computed values and independent
// identities (conv_transpose is the adjoint of conv; a unit-depth 3-D conv is the 2-D conv),
// its statistics (BN running stats with the unbiased variance, GN, dropout), and its agreement
// across layouts (exact) and dtypes (the float64 result rounded once). Backward against finite
// differences lives in reference_gradcheck_test.cpp.
#include <gtest/gtest.h>

#include "graph/fold_program.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "backends/reference/reference_backend.hpp"
#include "reference_op_harness.hpp"
#include "runtime/philox.hpp"

namespace convbench {
namespace {

using reftest::conv_attrs;
using reftest::OpHarness;
using reftest::pool_attrs;

using Values = std::vector<double>;

TensorDesc f64(std::vector<int64_t> shape, Layout layout = Layout::channels_first) {
  return TensorDesc{std::move(shape), DType::float64, layout};
}

Values iota(size_t n, double first = 1.0) {
  Values v(n);
  for (size_t i = 0; i < n; ++i) v[i] = first + static_cast<double>(i);
  return v;
}

void expect_near_all(const Values& actual, const Values& expected, double tol, const std::string& what = "") {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tol) << what << " element " << i;
}

// ---- the backend's contract --------------------------------------------------------------------

TEST(ReferenceBackend, NamesItselfSupportsEveryOpAndNeedsNoWorkspace) {
  ReferenceBackend backend;
  EXPECT_EQ(backend.name(), "reference");
  EXPECT_FALSE(backend.allocator().on_device());
  EXPECT_NE(dynamic_cast<CachingHostAllocator*>(&backend.allocator()), nullptr);
  for (const reftest::OpCase& c : reftest::op_cases())
    for (DType dtype : {DType::float32, DType::tf32, DType::float16, DType::bfloat16, DType::float64})
      for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
        const Graph g = reftest::build_case(c, dtype, layout);
        for (const Op& op : g.ops) {
          EXPECT_FALSE(backend.unsupported(g, op).has_value()) << c.name;
          // folded_conv keeps its computed kernel (inference), its bias, and the kernel's gradient
          // (backward) in the workspace, where the allocator counts them.
          if (op.kind == OpKind::folded_conv) {
            int64_t kernel = 1;
            for (int64_t d : op.fold->weight_shape()) kernel *= d;
            EXPECT_GE(backend.workspace_bytes(g, op, Phase::forward, false), kernel * element_bytes(dtype)) << c.name;
            const int64_t bias = op.conv.bias ? (op.conv.out_channels * element_bytes(dtype) + 255) / 256 * 256 : 0;
            EXPECT_EQ(backend.workspace_bytes(g, op, Phase::forward, true), bias) << c.name;  // kernel: aux
            EXPECT_GE(backend.workspace_bytes(g, op, Phase::backward, true), kernel * element_bytes(dtype)) << c.name;
            continue;
          }
          for (bool training : {false, true})
            EXPECT_EQ(backend.workspace_bytes(g, op, Phase::forward, training), 0) << c.name;
          EXPECT_EQ(backend.workspace_bytes(g, op, Phase::backward, true), 0) << c.name;
        }
      }
}

TEST(ReferenceBackend, AccumulateAndAddRoundOnceInLogicalOrder) {
  ReferenceBackend backend;
  const TensorDesc half{{2, 3, 2, 2}, DType::float16, Layout::channels_last};
  const TensorDesc single{{2, 3, 2, 2}, DType::float32, Layout::channels_first};
  const Values a = reftest::quantize(reftest::random_values(24, 1), DType::float16);
  const Values b = reftest::quantize(reftest::random_values(24, 2), DType::float16);
  Tensor ta = make_tensor(backend.allocator(), half, MemoryCategory::temporaries);
  Tensor tb = make_tensor(backend.allocator(), half, MemoryCategory::temporaries);
  Tensor out = make_tensor(backend.allocator(), single, MemoryCategory::temporaries);
  upload(backend, ta, a);
  upload(backend, tb, b);

  backend.add(out, ta, tb);  // float16 operands, float32 result, different layouts
  Values sum(24);
  for (size_t i = 0; i < 24; ++i) sum[i] = a[i] + b[i];
  EXPECT_EQ(download(backend, out), reftest::quantize(sum, DType::float32));

  backend.accumulate(ta, tb);
  EXPECT_EQ(download(backend, ta), reftest::quantize(sum, DType::float16));

  Tensor wrong = make_tensor(backend.allocator(), TensorDesc{{2, 3, 2, 1}, DType::float16, Layout::channels_last},
                             MemoryCategory::temporaries);
  EXPECT_THROW(backend.accumulate(wrong, tb), std::invalid_argument);
}

TEST(ReferenceBackend, HostCopiesAreRawBytes) {
  ReferenceBackend backend;
  const TensorDesc d{{1, 2, 3, 3}, DType::bfloat16, Layout::channels_last};
  Tensor t = make_tensor(backend.allocator(), d, MemoryCategory::inputs);
  std::vector<unsigned char> in(static_cast<size_t>(d.bytes())), out(in.size(), 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  backend.copy_from_host(t, in.data());
  EXPECT_EQ(std::memcmp(t.raw(), in.data(), in.size()), 0);
  backend.copy_to_host(t, out.data());
  EXPECT_EQ(out, in);
}

// ---- convolution -------------------------------------------------------------------------------

OpHarness conv_harness(ReferenceBackend& backend, const TensorDesc& in, const ConvAttrs& a, bool transpose = false) {
  GraphBuilder b("conv", in);
  const int y = transpose ? b.conv_transpose("conv", b.input(), a) : b.conv("conv", b.input(), a);
  return OpHarness(backend, b.finish(y));
}

TEST(ReferenceConv, Conv2dMatchesHandComputedValuesAndGradients) {
  ReferenceBackend backend;
  // x = [[1 2 3] [4 5 6] [7 8 9]], w = [[1 2] [3 4]], bias 0.5: y[i][j] = sum w[a][b] x[i+a][j+b] + 0.5
  OpHarness h = conv_harness(backend, f64({1, 1, 3, 3}), conv_attrs(1, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 1, true));
  h.inputs[0] = iota(9);
  h.params[0] = {1, 2, 3, 4};
  h.params[1] = {0.5};
  EXPECT_EQ(h.forward(false), (Values{37.5, 47.5, 67.5, 77.5}));
  h.forward(true);
  const reftest::OpGradients g = h.backward({1, 1, 1, 1});
  // grad_x: the sum of the kernel taps that touch each pixel; grad_w: sum of the 2x2 patch each
  // tap sees; grad_b: the number of outputs.
  EXPECT_EQ(*g.inputs[0], (Values{1, 3, 2, 4, 10, 6, 3, 7, 4}));
  EXPECT_EQ(g.params[0], (Values{12, 16, 24, 28}));
  EXPECT_EQ(g.params[1], (Values{4}));
}

TEST(ReferenceConv, StridePaddingAndDilationMatchHandComputedValues) {
  ReferenceBackend backend;
  {  // padding 1, stride 2: out (0,0) sees only x[0][0] through w[1][1]
    OpHarness h = conv_harness(backend, f64({1, 1, 3, 3}), conv_attrs(1, {2, 2}, {2, 2}, {1, 1}, {1, 1}, 1, false));
    h.inputs[0] = iota(9);
    h.params[0] = {1, 2, 3, 4};
    EXPECT_EQ(h.forward(false), (Values{4 * 1, 3 * 2 + 4 * 3, 2 * 4 + 4 * 7, 1 * 5 + 2 * 6 + 3 * 8 + 4 * 9}));
  }
  {  // dilation 2: the 2x2 kernel reads the corners of the 3x3 input
    OpHarness h = conv_harness(backend, f64({1, 1, 3, 3}), conv_attrs(1, {2, 2}, {1, 1}, {0, 0}, {2, 2}, 1, false));
    h.inputs[0] = iota(9);
    h.params[0] = {1, 2, 3, 4};
    EXPECT_EQ(h.forward(false), (Values{1 * 1 + 2 * 3 + 3 * 7 + 4 * 9}));
  }
  {  // 3-D, along depth: stride 2 and padding 1 over [1 2 3] with kernel [10 1] -> [1, 10*2 + 3]
    OpHarness h = conv_harness(backend, f64({1, 1, 3, 1, 1}),
                               conv_attrs(1, {2, 1, 1}, {2, 1, 1}, {1, 0, 0}, {1, 1, 1}, 1, false));
    h.inputs[0] = {1, 2, 3};
    h.params[0] = {10, 1};
    EXPECT_EQ(h.forward(false), (Values{1, 23}));
  }
  {  // 3-D, along depth: dilation 3 over [1 2 3 4 5] with kernel [10 1] -> [10*1 + 4, 10*2 + 5]
    OpHarness h = conv_harness(backend, f64({1, 1, 5, 1, 1}),
                               conv_attrs(1, {2, 1, 1}, {1, 1, 1}, {0, 0, 0}, {3, 1, 1}, 1, false));
    h.inputs[0] = iota(5);
    h.params[0] = {10, 1};
    EXPECT_EQ(h.forward(false), (Values{14, 25}));
  }
  {  // 3-D: a 2x2x2 kernel over a 2x2x2 input is a dot product
    OpHarness h = conv_harness(backend, f64({1, 1, 2, 2, 2}),
                               conv_attrs(1, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, false));
    h.inputs[0] = iota(8);
    h.params[0] = iota(8);
    EXPECT_EQ(h.forward(false), (Values{1 + 4 + 9 + 16 + 25 + 36 + 49 + 64}));
  }
}

TEST(ReferenceConv, GroupsKeepChannelsApart) {
  ReferenceBackend backend;
  // Two 1x1 input channels [2, 3]. Grouped: each output sees its own channel only.
  OpHarness grouped = conv_harness(backend, f64({1, 2, 1, 1}), conv_attrs(2, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, false));
  grouped.inputs[0] = {2, 3};
  grouped.params[0] = {10, 100};  // weight (2, 1, 1, 1)
  EXPECT_EQ(grouped.forward(false), (Values{20, 300}));
  OpHarness dense = conv_harness(backend, f64({1, 2, 1, 1}), conv_attrs(2, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false));
  dense.inputs[0] = {2, 3};
  dense.params[0] = {1, 2, 3, 4};  // weight (2, 2, 1, 1)
  EXPECT_EQ(dense.forward(false), (Values{1 * 2 + 2 * 3, 3 * 2 + 4 * 3}));
}

TEST(ReferenceConv, UnitDepth3dConvEqualsThe2dConv) {
  ReferenceBackend backend;
  OpHarness c2 = conv_harness(backend, f64({2, 4, 5, 6}), conv_attrs(6, {3, 2}, {2, 1}, {1, 1}, {1, 2}, 2, true));
  OpHarness c3 = conv_harness(backend, f64({2, 4, 1, 5, 6}, Layout::channels_last),
                              conv_attrs(6, {1, 3, 2}, {1, 2, 1}, {0, 1, 1}, {1, 1, 2}, 2, true));
  c3.inputs = c2.inputs;
  c3.params = c2.params;  // (6, 2, 3, 2) and (6, 2, 1, 3, 2) hold the same numbers in the same order
  EXPECT_EQ(c3.forward(false), c2.forward(false));
}

TEST(ReferenceConvTranspose, MatchesHandComputedValues) {
  ReferenceBackend backend;
  {  // stride 2 places a scaled copy of the kernel per input pixel; output_padding adds a
     // last row and column that only the bias reaches
    OpHarness h =
        conv_harness(backend, f64({1, 1, 2, 2}), conv_attrs(1, {2, 2}, {2, 2}, {0, 0}, {1, 1}, 1, true, {1, 1}), true);
    h.inputs[0] = {1, 2, 3, 4};
    h.params[0] = {1, 10, 100, 1000};
    h.params[1] = {0.5};
    Values expected(25, 0.5);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b)
            expected[static_cast<size_t>((2 * i + a) * 5 + 2 * j + b)] +=
                h.inputs[0][static_cast<size_t>(2 * i + j)] * h.params[0][static_cast<size_t>(2 * a + b)];
    EXPECT_EQ(expected[0], 1.5);
    EXPECT_EQ(expected[6], 1000.5);
    EXPECT_EQ(h.forward(false), expected);
  }
  {  // stride 1: overlapping copies add up: [1 2] * [3 5] -> [3, 5 + 6, 10]
    OpHarness h =
        conv_harness(backend, f64({1, 1, 1, 2}), conv_attrs(1, {1, 2}, {1, 1}, {0, 0}, {1, 1}, 1, false), true);
    h.inputs[0] = {1, 2};
    h.params[0] = {3, 5};
    EXPECT_EQ(h.forward(false), (Values{3, 11, 10}));
  }
  {  // padding crops: the same with padding 1 along W keeps only the middle
    OpHarness h =
        conv_harness(backend, f64({1, 1, 1, 2}), conv_attrs(1, {1, 3}, {1, 1}, {0, 1}, {1, 1}, 1, false), true);
    h.inputs[0] = {1, 2};
    h.params[0] = {3, 5, 7};  // uncropped: [3, 5+6, 7+10, 14] -> cropped [11, 17]
    EXPECT_EQ(h.forward(false), (Values{11, 17}));
  }
}

// <conv(x), y> = <x, conv_transpose(y)> with the same weight array: PyTorch's ConvTranspose is the
// adjoint (the gradient) of Conv, which pins down its stride, padding, dilation and groups.
void expect_conv_transpose_is_adjoint(const TensorDesc& x_desc, const ConvAttrs& conv) {
  ReferenceBackend backend;
  OpHarness fwd = conv_harness(backend, x_desc, conv);
  const TensorDesc y_desc = fwd.output_desc();
  ConvAttrs t = conv;
  t.out_channels = x_desc.channels();
  t.output_padding.clear();
  for (size_t d = 0; d < conv.kernel.size(); ++d) {
    const int64_t natural =
        (y_desc.shape[d + 2] - 1) * conv.stride[d] - 2 * conv.padding[d] + conv.dilation[d] * (conv.kernel[d] - 1) + 1;
    t.output_padding.push_back(x_desc.shape[d + 2] - natural);
  }
  TensorDesc t_in = y_desc;
  OpHarness adj = conv_harness(backend, t_in, t, true);
  ASSERT_EQ(adj.output_desc().shape, x_desc.shape);
  adj.params[0] = fwd.params[0];
  const Values& x = fwd.inputs[0];
  const Values& y = adj.inputs[0];
  const double lhs = reftest::dot(fwd.forward(false), y);
  const double rhs = reftest::dot(x, adj.forward(false));
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, std::abs(lhs)));
  EXPECT_GT(std::abs(lhs), 1e-3);
}

TEST(ReferenceConvTranspose, IsTheAdjointOfConv2d) {
  expect_conv_transpose_is_adjoint(f64({2, 4, 9, 8}), conv_attrs(6, {3, 2}, {2, 3}, {1, 1}, {2, 1}, 2, false));
}

TEST(ReferenceConvTranspose, IsTheAdjointOfConv3d) {
  expect_conv_transpose_is_adjoint(f64({1, 3, 6, 5, 7}, Layout::channels_last),
                                   conv_attrs(3, {2, 3, 3}, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, 3, false));
}

// ---- normalisation -----------------------------------------------------------------------------

TEST(ReferenceBatchNorm, TrainingUsesBatchStatisticsAndUpdatesRunningStatsWithUnbiasedVariance) {
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    SCOPED_TRACE(std::string(to_string(layout)));
    ReferenceBackend backend;
    GraphBuilder b("bn", f64({2, 2, 1, 2}, layout));
    OpHarness h(backend, b.finish(b.batch_norm("bn", b.input(), 1e-5, 0.1)));
    // Logical (n, c, s): channel 0 holds 1, 2, 3, 4 (mean 2.5, biased var 1.25, unbiased 5/3);
    // channel 1 holds 0, 0, 0, 8 (mean 2, biased var 12, unbiased 16).
    h.inputs[0] = {1, 2, 0, 0, 3, 4, 0, 8};
    h.params[0] = {2.0, 0.5};    // gamma
    h.params[1] = {0.1, -1.0};   // beta
    h.buffers[0] = {0.5, -1.0};  // running mean
    h.buffers[1] = {2.0, 3.0};   // running var
    const Values y = h.forward(true);
    const double inv0 = 1.0 / std::sqrt(1.25 + 1e-5), inv1 = 1.0 / std::sqrt(12.0 + 1e-5);
    expect_near_all(y,
                    {(1 - 2.5) * inv0 * 2 + 0.1, (2 - 2.5) * inv0 * 2 + 0.1, (0 - 2.0) * inv1 * 0.5 - 1,
                     (0 - 2.0) * inv1 * 0.5 - 1, (3 - 2.5) * inv0 * 2 + 0.1, (4 - 2.5) * inv0 * 2 + 0.1,
                     (0 - 2.0) * inv1 * 0.5 - 1, (8 - 2.0) * inv1 * 0.5 - 1},
                    1e-12, "output");
    expect_near_all(h.buffer_after_forward(0), {0.9 * 0.5 + 0.1 * 2.5, 0.9 * -1.0 + 0.1 * 2.0}, 1e-12, "running_mean");
    expect_near_all(h.buffer_after_forward(1), {0.9 * 2.0 + 0.1 * 5.0 / 3.0, 0.9 * 3.0 + 0.1 * 16.0}, 1e-12,
                    "running_var");
    expect_near_all(h.aux_after_forward(0), {2.5, 2.0}, 1e-12, "saved mean");
    expect_near_all(h.aux_after_forward(1), {inv0, inv1}, 1e-12, "saved invstd");
  }
}

TEST(ReferenceBatchNorm, InferenceUsesRunningStatsAndLeavesThemAlone) {
  ReferenceBackend backend;
  GraphBuilder b("bn", f64({2, 2, 1, 2}, Layout::channels_last));
  OpHarness h(backend, b.finish(b.batch_norm("bn", b.input(), 1e-3, 0.1)));
  h.inputs[0] = {1, 2, 0, 0, 3, 4, 0, 8};
  h.params[0] = {2.0, 0.5};
  h.params[1] = {0.1, -1.0};
  h.buffers[0] = {0.5, -1.0};
  h.buffers[1] = {2.0, 3.0};
  Values expected;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int s = 0; s < 2; ++s) {
        const double x = h.inputs[0][static_cast<size_t>((n * 2 + c) * 2 + s)];
        expected.push_back((x - h.buffers[0][c]) / std::sqrt(h.buffers[1][c] + 1e-3) * h.params[0][c] + h.params[1][c]);
      }
  expect_near_all(h.forward(false), expected, 1e-12);
  EXPECT_EQ(h.buffer_after_forward(0), h.buffers[0]);
  EXPECT_EQ(h.buffer_after_forward(1), h.buffers[1]);
}

TEST(ReferenceBatchNorm, TrainingWithOneValuePerChannelIsAnError) {
  ReferenceBackend backend;
  GraphBuilder b("bn", f64({1, 2, 1, 1}));
  OpHarness h(backend, b.finish(b.batch_norm("bn", b.input())));
  EXPECT_THROW(h.forward(true), std::invalid_argument);
  EXPECT_NO_THROW(h.forward(false));
}

TEST(ReferenceGroupNorm, NormalisesEachGroupOfEachSample) {
  ReferenceBackend backend;
  GraphBuilder b("gn", f64({1, 4, 1, 2}, Layout::channels_last));
  OpHarness h(backend, b.finish(b.group_norm("gn", b.input(), 2, 1e-5)));
  // group 0 = channels 0, 1: 1, 2, 3, 4 (mean 2.5, var 1.25); group 1: 10, 10, 10, 14 (mean 11, var 3)
  h.inputs[0] = {1, 2, 3, 4, 10, 10, 10, 14};
  h.params[0] = {1, 2, 3, 4};
  h.params[1] = {0, 0, 1, 1};
  const double r0 = 1.0 / std::sqrt(1.25 + 1e-5), r1 = 1.0 / std::sqrt(3.0 + 1e-5);
  const Values expected{-1.5 * r0,       -0.5 * r0,       0.5 * r0 * 2,    1.5 * r0 * 2,
                        -1 * r1 * 3 + 1, -1 * r1 * 3 + 1, -1 * r1 * 4 + 1, 3 * r1 * 4 + 1};
  expect_near_all(h.forward(true), expected, 1e-12, "training");
  expect_near_all(h.aux_after_forward(0), {2.5, 11.0}, 1e-12, "saved mean");
  expect_near_all(h.aux_after_forward(1), {r0, r1}, 1e-12, "saved rstd");
  expect_near_all(h.forward(false), expected, 1e-12, "inference");
}

// ---- element-wise ops, concat, dropout ---------------------------------------------------------

TEST(ReferenceElementwise, ReluAndLeakyReluMatchHandComputedValues) {
  ReferenceBackend backend;
  {
    GraphBuilder b("relu", f64({1, 1, 2, 2}));
    OpHarness h(backend, b.finish(b.relu("relu", b.input())));
    h.inputs[0] = {-1, 0, 2, -3.5};
    EXPECT_EQ(h.forward(true), (Values{0, 0, 2, 0}));
    EXPECT_EQ(*h.backward({5, 6, 7, 8}).inputs[0], (Values{0, 0, 7, 0}));  // from the saved output
  }
  {
    GraphBuilder b("lrelu", f64({1, 1, 2, 2}));
    OpHarness h(backend, b.finish(b.leaky_relu("lrelu", b.input(), 0.25)));
    h.inputs[0] = {-1, 0, 2, -3.5};
    EXPECT_EQ(h.forward(true), (Values{-0.25, 0, 2, -0.875}));
    EXPECT_EQ(*h.backward({4, 8, 7, 8}).inputs[0], (Values{1, 2, 7, 2}));  // slope where x <= 0
  }
}

TEST(ReferenceElementwise, AddAndSubForwardAndBackward) {
  ReferenceBackend backend;
  {
    GraphBuilder b("add", f64({1, 2, 1, 2}));
    OpHarness h(backend, b.finish(b.add("add", b.input(), b.input())));
    h.inputs = {{1, 2, 3, 4}, {10, 20, 30, 40}};
    EXPECT_EQ(h.forward(true), (Values{11, 22, 33, 44}));
    const reftest::OpGradients g = h.backward({1, 2, 3, 4});  // both aliased: nothing to write
    EXPECT_FALSE(g.inputs[0].has_value());
    EXPECT_FALSE(g.inputs[1].has_value());
  }
  {
    GraphBuilder b("sub", f64({1, 2, 1, 2}));
    OpHarness h(backend, b.finish(b.sub("sub", b.input(), b.input())));
    h.inputs = {{1, 2, 3, 4}, {10, 20, 30, 40}};
    EXPECT_EQ(h.forward(true), (Values{-9, -18, -27, -36}));
    const reftest::OpGradients g = h.backward({1, 2, 3, 4});
    EXPECT_FALSE(g.inputs[0].has_value());
    EXPECT_EQ(*g.inputs[1], (Values{-1, -2, -3, -4}));
  }
}

TEST(ReferenceConcat, PlacesInputsAlongChannelsAndSplitsTheGradient) {
  ReferenceBackend backend;
  GraphBuilder b("cat", f64({2, 1, 1, 2}, Layout::channels_last));
  const int a = b.conv("a", b.input(), conv_attrs(2, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false));
  OpHarness h(backend, b.finish(b.concat("cat", {b.input(), a, b.input()})));
  h.inputs = {{1, 2, 3, 4}, {10, 11, 12, 13, 14, 15, 16, 17}, {100, 101, 102, 103}};
  const Values y = h.forward(true);
  EXPECT_EQ(y, (Values{1, 2, 10, 11, 12, 13, 100, 101, 3, 4, 14, 15, 16, 17, 102, 103}));
  const reftest::OpGradients g = h.backward(y);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(*g.inputs[i], h.inputs[i]) << "input " << i;
}

TEST(ReferenceDropout, KeepsAboutOneMinusPAndScalesByItsInverse) {
  const double p = 0.3;
  Values reference_out;
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    SCOPED_TRACE(std::string(to_string(layout)));
    ReferenceBackend backend;
    GraphBuilder b("drop", f64({2, 3, 40, 40}, layout));
    OpHarness h(backend, b.finish(b.dropout("drop", b.input(), p)));
    h.inputs[0] = reftest::random_values(9600, 5, 0.5, 1.5);
    h.dropout_seed = 1234;
    const Values y = h.forward(true);
    const Values mask = h.aux_after_forward(0);
    ASSERT_EQ(h.aux_tensor(0).desc.dtype, DType::uint8);
    size_t kept = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      const bool keep = dropout_keep(i, 1234, static_cast<float>(p));  // the logical index decides
      ASSERT_EQ(mask[i], keep ? 1.0 : 0.0) << i;
      ASSERT_NEAR(y[i], keep ? h.inputs[0][i] / (1 - p) : 0.0, 1e-15) << i;
      kept += keep;
    }
    // 9600 Bernoulli(0.7) draws: standard deviation of the fraction is 0.0047.
    EXPECT_NEAR(static_cast<double>(kept) / 9600.0, 1 - p, 0.02);
    const Values gx = *h.backward(Values(9600, 2.0)).inputs[0];
    for (size_t i = 0; i < gx.size(); ++i) ASSERT_NEAR(gx[i], mask[i] * 2.0 / (1 - p), 1e-15) << i;
    if (reference_out.empty())
      reference_out = y;
    else
      EXPECT_EQ(y, reference_out);  // layouts agree
    h.dropout_seed = 1235;
    EXPECT_NE(h.forward(true), y) << "another seed draws another mask";
  }
}

TEST(ReferenceDropout, InferenceIsTheIdentity) {
  ReferenceBackend backend;
  GraphBuilder b("drop", f64({1, 2, 3, 3}, Layout::channels_last));
  OpHarness h(backend, b.finish(b.dropout("drop", b.input(), 0.5)));
  EXPECT_EQ(h.forward(false), h.inputs[0]);
}

// ---- pooling and upsampling ---------------------------------------------------------------------

OpHarness pool_harness(ReferenceBackend& backend, const TensorDesc& in, const PoolAttrs& a, bool max) {
  GraphBuilder b("pool", in);
  return OpHarness(backend, b.finish(max ? b.max_pool("pool", b.input(), a) : b.avg_pool("pool", b.input(), a)));
}

TEST(ReferenceMaxPool, TakesWindowMaximaAndSavesPyTorchIndices) {
  ReferenceBackend backend;
  OpHarness h =
      pool_harness(backend, f64({1, 1, 4, 4}, Layout::channels_last), pool_attrs({2, 2}, {2, 2}, {0, 0}), true);
  h.inputs[0] = {1, 5, 2, 0, 3, 4, 9, 8, 7, 15, 6, 10, 11, 12, 13, 14};
  EXPECT_EQ(h.forward(true), (Values{5, 9, 15, 14}));
  EXPECT_EQ(h.aux_tensor(0).desc.dtype, DType::int64);
  EXPECT_EQ(h.aux_after_forward(0), (Values{1, 6, 9, 15}));  // flat index within the input plane
  Values expected(16, 0.0);
  expected[1] = 1, expected[6] = 2, expected[9] = 3, expected[15] = 4;
  EXPECT_EQ(*h.backward({1, 2, 3, 4}).inputs[0], expected);
}

TEST(ReferenceMaxPool, PaddingNeverWinsAndTiesGoToTheFirstInWindowOrder) {
  ReferenceBackend backend;
  {  // all inputs negative: a zero from the padding would win if padding took part
    OpHarness h = pool_harness(backend, f64({1, 1, 3, 3}), pool_attrs({3, 3}, {2, 2}, {1, 1}), true);
    h.inputs[0] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
    EXPECT_EQ(h.forward(true), (Values{-1, -2, -4, -5}));
    EXPECT_EQ(h.aux_after_forward(0), (Values{0, 1, 3, 4}));
  }
  {  // ties
    OpHarness h = pool_harness(backend, f64({1, 2, 2, 2}), pool_attrs({2, 2}, {1, 1}, {0, 0}), true);
    h.inputs[0] = {3, 3, 3, 3, 0, 7, 7, 1};
    EXPECT_EQ(h.forward(true), (Values{3, 7}));
    EXPECT_EQ(h.aux_after_forward(0), (Values{0, 1}));
  }
  {  // 3-D: the index runs over D*H*W
    OpHarness h = pool_harness(backend, f64({1, 1, 2, 2, 2}), pool_attrs({2, 2, 2}, {2, 2, 2}, {0, 0, 0}), true);
    h.inputs[0] = {1, 2, 3, 4, 5, 9, 7, 8};
    EXPECT_EQ(h.forward(true), (Values{9}));
    EXPECT_EQ(h.aux_after_forward(0), (Values{5}));
  }
}

TEST(ReferenceAvgPool, CountsPaddingInTheDivisor) {
  ReferenceBackend backend;
  OpHarness h =
      pool_harness(backend, f64({1, 1, 3, 3}, Layout::channels_last), pool_attrs({3, 3}, {2, 2}, {1, 1}), false);
  h.inputs[0] = iota(9);
  expect_near_all(h.forward(true), {12.0 / 9, 16.0 / 9, 24.0 / 9, 28.0 / 9}, 1e-15);
  // Each pixel gets 1/9 from every window covering it: corners 1, edges 2, centre 4.
  expect_near_all(*h.backward({1, 1, 1, 1}).inputs[0],
                  {1.0 / 9, 2.0 / 9, 1.0 / 9, 2.0 / 9, 4.0 / 9, 2.0 / 9, 1.0 / 9, 2.0 / 9, 1.0 / 9}, 1e-15);
}

TEST(ReferenceUpsample, RepeatsPixelsAndSumsGradientBlocks) {
  ReferenceBackend backend;
  {
    GraphBuilder b("up", f64({1, 1, 2, 2}, Layout::channels_last));
    OpHarness h(backend, b.finish(b.upsample("up", b.input(), 2)));
    h.inputs[0] = {1, 2, 3, 4};
    EXPECT_EQ(h.forward(true), (Values{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
    EXPECT_EQ(*h.backward(iota(16, 0.0)).inputs[0],
              (Values{0 + 1 + 4 + 5, 2 + 3 + 6 + 7, 8 + 9 + 12 + 13, 10 + 11 + 14 + 15}));
  }
  {
    GraphBuilder b("up", f64({1, 1, 1, 1, 2}));
    OpHarness h(backend, b.finish(b.upsample("up", b.input(), 2)));
    h.inputs[0] = {5, 6};
    EXPECT_EQ(h.forward(true), (Values{5, 5, 6, 6, 5, 5, 6, 6, 5, 5, 6, 6, 5, 5, 6, 6}));
  }
}

// ---- layouts and dtypes across every op case -------------------------------------------------

TEST(ReferenceLayouts, ChannelsLastGivesExactlyTheChannelsFirstResults) {
  ReferenceBackend backend;
  for (const reftest::OpCase& c : reftest::op_cases()) {
    SCOPED_TRACE(c.name);
    for (bool training : {false, true}) {
      OpHarness first(backend, reftest::build_case(c, DType::float64, Layout::channels_first), 3);
      OpHarness last(backend, reftest::build_case(c, DType::float64, Layout::channels_last), 3);
      ASSERT_EQ(first.inputs, last.inputs);  // same seeds, same logical values
      EXPECT_EQ(first.forward(training), last.forward(training));
      if (!training) continue;
      for (size_t i = 0; i < aux_tensors(first.graph(), first.op()).size(); ++i)
        EXPECT_EQ(first.aux_after_forward(i), last.aux_after_forward(i)) << "aux " << i;
      for (size_t i = 0; i < first.buffers.size(); ++i)
        EXPECT_EQ(first.buffer_after_forward(i), last.buffer_after_forward(i)) << "buffer " << i;
      const Values r = reftest::random_values(first.output_desc().numel(), 11);
      const reftest::OpGradients gf = first.backward(r), gl = last.backward(r);
      EXPECT_EQ(gf.inputs, gl.inputs);
      EXPECT_EQ(gf.params, gl.params);
    }
  }
}

// Unit roundoff of a dtype: a correctly rounded result is within this relative distance.
double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::float16: return std::ldexp(1.0, -11);
    case DType::bfloat16: return std::ldexp(1.0, -8);
    default: return std::ldexp(1.0, -24);
  }
}

// Each element within `u` relative of the float64 result, plus a small absolute allowance for
// float16 subnormals and for statistics that lower-precision runs keep in float32.
void expect_rounded_from(const Values& low, const Values& exact, double u, const std::string& what) {
  ASSERT_EQ(low.size(), exact.size()) << what;
  const double slack = 1e-6 * std::max(reftest::max_abs(exact), 1e-3);
  for (size_t i = 0; i < low.size(); ++i)
    ASSERT_LE(std::abs(low[i] - exact[i]), u * std::abs(exact[i]) + slack)
        << what << " element " << i << ": " << low[i] << " vs float64 " << exact[i];
}

// With inputs every dtype can hold exactly, a lower-precision run computes in double as the
// float64 run does and rounds its results once: float32/tf32 to 2^-24, float16 to 2^-11,
// bfloat16 to 2^-8 of the float64 results.
TEST(ReferenceDtypes, LowerPrecisionResultsAreTheFloat64ResultsRounded) {
  ReferenceBackend backend;
  for (const reftest::OpCase& c : reftest::op_cases()) {
    // A folded_conv rounds the kernel it computes to the block's dtype before convolving with it
    // (what the hardware, and F.conv on a computed weight in PyTorch, does): two roundings, not
    // one. The cpu and CUDA tests compare it with the reference in every dtype they run.
    if (reftest::build_case(c, DType::float64, Layout::channels_first).ops.back().kind == OpKind::folded_conv) continue;
    for (DType dtype : {DType::float32, DType::tf32, DType::float16, DType::bfloat16}) {
      SCOPED_TRACE(c.name + " " + std::string(to_string(dtype)));
      const Layout layout = dtype == DType::float16 ? Layout::channels_last : Layout::channels_first;
      OpHarness exact(backend, reftest::build_case(c, DType::float64, layout), 5);
      OpHarness low(backend, reftest::build_case(c, dtype, layout), 5);
      for (size_t i = 0; i < exact.inputs.size(); ++i)
        exact.inputs[i] = low.inputs[i] = reftest::quantize(exact.inputs[i], dtype);
      for (size_t i = 0; i < exact.params.size(); ++i)
        exact.params[i] = low.params[i] = reftest::quantize(exact.params[i], dtype);
      // Running statistics in the statistics dtype, a frozen conv's weight in the block's.
      for (size_t i = 0; i < exact.buffers.size(); ++i)
        exact.buffers[i] = low.buffers[i] = reftest::quantize(
            exact.buffers[i], low.graph().buffers[static_cast<size_t>(low.op().buffers[i])].desc.dtype);
      const double u = unit_roundoff(dtype);

      expect_rounded_from(low.forward(false), exact.forward(false), u, "inference output");
      expect_rounded_from(low.forward(true), exact.forward(true), u, "training output");
      for (size_t i = 0; i < exact.buffers.size(); ++i)
        expect_rounded_from(low.buffer_after_forward(i), exact.buffer_after_forward(i), unit_roundoff(DType::float32),
                            "buffer");
      const Values r = reftest::quantize(reftest::random_values(exact.output_desc().numel(), 13), dtype);
      // An op that saves its output (relu, sigmoid) runs backward from the stored, rounded one,
      // as PyTorch does: the float64 run reads that same saved output, so the gradient is still
      // computed once in double and rounded once.
      if (saved_tensors(exact.op(), std::vector<bool>(exact.op().inputs.size(), true)).output)
        exact.set_saved_output(low.forward(true));
      const reftest::OpGradients ge = exact.backward(r), gl = low.backward(r);
      for (size_t i = 0; i < ge.inputs.size(); ++i)
        if (ge.inputs[i]) expect_rounded_from(*gl.inputs[i], *ge.inputs[i], u, "grad input " + std::to_string(i));
      for (size_t i = 0; i < ge.params.size(); ++i)
        expect_rounded_from(gl.params[i], ge.params[i], u, "grad param " + std::to_string(i));
    }
  }
}

// Without pre-rounding, float32 inputs differ from float64 ones by their own rounding: results
// stay within a few float32 ulps of the float64 run.
TEST(ReferenceDtypes, Float32ConvIsCloseToFloat64) {
  ReferenceBackend backend;
  const reftest::OpCase c = reftest::op_case("conv2d_grouped_strided_dilated");
  OpHarness exact(backend, reftest::build_case(c, DType::float64, Layout::channels_last), 9);
  OpHarness single(backend, reftest::build_case(c, DType::float32, Layout::channels_last), 9);
  const Values y64 = exact.forward(true), y32 = single.forward(true);
  const double scale = reftest::max_abs(y64);
  for (size_t i = 0; i < y64.size(); ++i) EXPECT_NEAR(y32[i], y64[i], 1e-6 * scale) << i;
}

// ---- tf32: conv operands rounded as TF32 tensor cores round them ------------------------------

TEST(ReferenceTf32, RoundingKeepsTenMantissaBitsToNearestWithTiesAwayFromZero) {
  EXPECT_EQ(round_to_tf32(1.0f), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);  // the last kept bit
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-12f), 1.0f);             // below half a place: down
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f);  // exactly half: away from zero
  EXPECT_EQ(round_to_tf32(-(1.0f + 0x1p-11f)), -(1.0f + 0x1p-10f));
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f);  // above half: up
  EXPECT_EQ(round_to_tf32(2.0f - 0x1p-23f), 2.0f);                        // carries into the exponent
  EXPECT_EQ(round_to_tf32(0.1f), 0x1.998p-4f);                            // 0x3dcccccd -> 0x3dccc000
  EXPECT_EQ(round_to_tf32(0x1p-127f), 0x1p-127f);  // subnormals keep their top 10 bits (steps of 2^-136)
  EXPECT_EQ(round_to_tf32(0x1p-140f), 0.0f);       // and lose what is below
  EXPECT_EQ(round_to_tf32(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(round_to_tf32(-0.0f)));
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::max()), std::numeric_limits<float>::infinity());
  // Every result has its 13 low mantissa bits clear.
  for (float v : {0.3f, -7.77f, 1e-30f, 12345.678f})
    EXPECT_EQ(std::bit_cast<uint32_t>(round_to_tf32(v)) & 0x1fffu, 0u) << v;
}

// A tf32 conv is the float64 conv of its operands rounded to TF32, rounded once to float:
// forward (x, w), data gradient (g, w) and weight gradient (g, x); the bias gradient sums the
// unrounded g. With the same inputs a float32 conv differs.
TEST(ReferenceTf32, ConvOperandsAreRoundedAndTheSumsAreNot) {
  ReferenceBackend backend;
  for (const char* name : {"conv2d_grouped_strided_dilated", "conv3d_grouped_dilated", "conv_transpose2d_grouped"}) {
    const reftest::OpCase c = reftest::op_case(name);
    SCOPED_TRACE(c.name);
    OpHarness tf32(backend, reftest::build_case(c, DType::tf32, Layout::channels_first), 21);
    OpHarness single(backend, reftest::build_case(c, DType::float32, Layout::channels_first), 21);
    OpHarness exact(backend, reftest::build_case(c, DType::float64, Layout::channels_first), 21);
    // float32 values with low mantissa bits set, so that TF32 rounding changes them.
    for (size_t i = 0; i < tf32.inputs.size(); ++i) {
      tf32.inputs[i] = single.inputs[i] = reftest::quantize(tf32.inputs[i], DType::float32);
      exact.inputs[i] = reftest::quantize(tf32.inputs[i], DType::tf32);
    }
    for (size_t i = 0; i < tf32.params.size(); ++i) {
      tf32.params[i] = single.params[i] = reftest::quantize(tf32.params[i], DType::float32);
      // the bias is added, not multiplied: it keeps its float32 value
      exact.params[i] = i == 1 ? tf32.params[i] : reftest::quantize(tf32.params[i], DType::tf32);
    }
    const Values y = tf32.forward(true);
    EXPECT_EQ(y, reftest::quantize(exact.forward(true), DType::float32)) << "forward";
    EXPECT_NE(y, single.forward(true)) << "TF32 rounding should change some outputs";

    const Values g = reftest::quantize(reftest::random_values(tf32.output_desc().numel(), 23), DType::float32);
    const reftest::OpGradients got = tf32.backward(g);
    const reftest::OpGradients want = exact.backward(reftest::quantize(g, DType::tf32));
    ASSERT_TRUE(got.inputs[0].has_value());
    EXPECT_EQ(*got.inputs[0], reftest::quantize(*want.inputs[0], DType::float32)) << "data gradient";
    EXPECT_EQ(got.params[0], reftest::quantize(want.params[0], DType::float32)) << "weight gradient";
    // Bias gradient: the sum of g itself, as float64 computes it from the unrounded g.
    OpHarness plain(backend, reftest::build_case(c, DType::float64, Layout::channels_first), 21);
    plain.inputs = exact.inputs;
    plain.params = exact.params;
    plain.forward(true);
    EXPECT_EQ(got.params[1], reftest::quantize(plain.backward(g).params[1], DType::float32)) << "bias gradient";
  }
}

TEST(ReferenceTf32, OpsOtherThanConvolutionsComputeAsFloat32) {
  ReferenceBackend backend;
  for (const char* name : {"batch_norm2d", "relu2d"}) {
    const reftest::OpCase c = reftest::op_case(name);
    SCOPED_TRACE(c.name);
    OpHarness tf32(backend, reftest::build_case(c, DType::tf32, Layout::channels_first), 4);
    OpHarness single(backend, reftest::build_case(c, DType::float32, Layout::channels_first), 4);
    for (size_t i = 0; i < tf32.inputs.size(); ++i)
      tf32.inputs[i] = single.inputs[i] = reftest::quantize(tf32.inputs[i], DType::float32);
    for (size_t i = 0; i < tf32.params.size(); ++i)
      tf32.params[i] = single.params[i] = reftest::quantize(tf32.params[i], DType::float32);
    EXPECT_EQ(tf32.forward(true), single.forward(true));
  }
}

}  // namespace
}  // namespace convbench

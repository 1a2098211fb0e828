// The executor on the reference backend: whole-variant gradients against central finite
// differences in float64, and allocator statistics equal to the memory model, byte for byte.
#include <gtest/gtest.h>

#include "memory_expectations.hpp"

#include <cmath>

#include "analysis/memory_model.hpp"
#include "backends/reference/reference_backend.hpp"
#include "measure/variant_runner.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "spec/kind_grouped.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::small_block;
using testing::variant;

VariantSpec custom_subtracted(int64_t mid) {
  // Seed 002's SubtractedConv: p = pointwise(x); hp = depthwise(p) - p; lp = conv(p); concat.
  VariantSpec v = variant("custom", "subtracted");
  auto op = [](std::string kind, std::string name, std::vector<std::string> in) {
    CustomOpSpec s;
    s.op = std::move(kind);
    s.name = std::move(name);
    s.inputs = std::move(in);
    s.key_path = "ops[?]";
    return s;
  };
  CustomOpSpec p = op("conv", "p", {"input"});
  p.fields.set("out_channels", mid);
  p.fields.set("kernel", std::vector<int64_t>(2, 1));
  CustomOpSpec dw = op("conv", "dw", {"p"});
  dw.fields.set("groups", FieldKeyword{"depthwise"});
  CustomOpSpec lp = op("conv", "lp", {"p"});
  v.ops = {p,
           dw,
           op("sub", "hp", {"dw", "p"}),
           lp,
           op("concat", "cat", {"hp", "lp"}),
           op("batch_norm", "bn", {"cat"}),
           op("relu", "out", {"bn"})};
  return v;
}

// Squeeze-and-excitation after a frozen blur, a channel split into slices, a same-shape mul and a
// space_to_depth (issue 19's ops), as one custom graph.
VariantSpec custom_ops_b() {
  VariantSpec v = variant("custom", "ops-b");
  auto op = [](std::string kind, std::string name, std::vector<std::string> in) {
    CustomOpSpec s;
    s.op = std::move(kind);
    s.name = std::move(name);
    s.inputs = std::move(in);
    s.key_path = "ops[?]";
    return s;
  };
  CustomOpSpec c = op("conv", "c", {"input"});
  c.fields.set("kernel", std::vector<int64_t>(2, 1));
  c.fields.set("out_channels", int64_t{8});
  CustomOpSpec blur = op("conv", "blur", {"c"});
  blur.fields.set("groups", FieldKeyword{"depthwise"});
  blur.fields.set("frozen", true);
  blur.fields.set("init", FieldKeyword{"blur"});
  CustomOpSpec squeeze = op("avg_pool", "squeeze", {"blur"});
  squeeze.fields.set("kernel", std::vector<int64_t>(2, 6));
  CustomOpSpec head = op("slice", "head", {"se"});
  head.fields.set("length", int64_t{2});
  CustomOpSpec tail = op("slice", "tail", {"se"});
  tail.fields.set("start", int64_t{2});
  tail.fields.set("length", int64_t{6});
  CustomOpSpec s2d = op("space_to_depth", "s2d", {"gated"});
  s2d.fields.set("order", FieldKeyword{"block_major"});
  CustomOpSpec out = op("conv", "out", {"s2d"});
  out.fields.set("kernel", std::vector<int64_t>(2, 1));
  out.fields.set("out_channels", int64_t{8});
  v.ops = {c,
           blur,
           squeeze,
           op("mul", "se", {"blur", "squeeze"}),
           head,
           tail,
           op("concat", "cat", {"tail", "head"}),
           op("mul", "gated", {"cat", "c"}),
           s2d,
           out};
  return v;
}

std::vector<std::pair<BlockSpec, VariantSpec>> gradient_cases() {
  std::vector<std::pair<BlockSpec, VariantSpec>> cases;
  for (int dims : {2, 3}) {
    for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
      BlockSpec b = small_block(dims, 4, 8, dims == 2 ? 6 : 4);
      b.dtype = DType::float64;
      b.layout = layout;
      VariantSpec bottleneck = variant("bottleneck");
      bottleneck.kind_parameters = BottleneckParameters{.ratio = 2, .groups = 2};
      VariantSpec grouped = variant("grouped");
      grouped.kind_parameters = GroupedParameters{.groups = 2};
      for (const VariantSpec& v : {variant("standard"), bottleneck, variant("separable"), grouped})
        cases.emplace_back(b, v);
      BlockSpec strided = b;
      strided.stride.assign(static_cast<size_t>(dims), 2);
      strided.residual = true;
      strided.norm = NormKind::group;
      strided.norm_groups = 2;
      strided.act = ActKind::leaky_relu;
      cases.emplace_back(strided, variant("standard"));
      BlockSpec identity = b;
      identity.out_channels = identity.in_channels;
      identity.residual = true;
      identity.dropout = 0.25;
      cases.emplace_back(identity, bottleneck);
    }
  }
  BlockSpec c = small_block(2, 4, 8, 6);
  c.dtype = DType::float64;
  cases.emplace_back(c, custom_subtracted(4));
  // layout_conversion: boundary: channels-last ops between two conversions, with a residual
  // shortcut that reads the converted input, and a custom graph whose `input` is the converted one.
  for (int dims : {2, 3}) {
    BlockSpec boundary = small_block(dims, 4, 8, dims == 2 ? 6 : 4);
    boundary.dtype = DType::float64;
    boundary.layout = Layout::channels_last;
    boundary.layout_conversion = LayoutConversion::boundary;
    boundary.residual = true;
    VariantSpec bottleneck = variant("bottleneck");
    bottleneck.kind_parameters = BottleneckParameters{.ratio = 2};
    cases.emplace_back(boundary, bottleneck);
  }
  BlockSpec custom_boundary = c;
  custom_boundary.layout = Layout::channels_last;
  custom_boundary.layout_conversion = LayoutConversion::boundary;
  cases.emplace_back(custom_boundary, custom_subtracted(4));
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    BlockSpec ops_b = c;
    ops_b.layout = layout;
    cases.emplace_back(ops_b, custom_ops_b());
  }
  return cases;
}

// L = sum(y * dy): its gradient wrt y is dy, so backward(dy) gives dL/dparams.
double loss(Executor& ex, ModelState& s, const Tensor& x, const std::vector<double>& dy) {
  Tensor y = ex.forward(s, x);
  const std::vector<double> out = download(ex.backend(), y);
  double l = 0;
  for (size_t i = 0; i < out.size(); ++i) l += out[i] * dy[i];
  return l;
}

TEST(Executor, VariantGradientsMatchFiniteDifferences) {
  for (const auto& [block, v] : gradient_cases()) {
    SCOPED_TRACE(v.name + " dims=" + std::to_string(block.dims) + " " + std::string(to_string(block.layout)) +
                 (block.residual ? " residual" : "") + (block.dropout > 0 ? " dropout" : "") +
                 (converts_at_boundary(block) ? " boundary" : ""));
    ReferenceBackend backend;
    const Graph g = build_variant_graph(block, v);
    Executor ex(g, backend, true);
    ModelState s = ex.init_state(7);
    Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
    fill_uniform(backend, x, 11);
    Tensor dyt = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
    fill_uniform(backend, dyt, 13);
    const std::vector<double> dy = download(backend, dyt);
    ex.forward(s, x);
    ex.backward(s, dyt);
    for (size_t p = 0; p < g.params.size(); ++p) {
      const std::vector<double> analytic = download(backend, s.grads[p]);
      std::vector<double> w = download(backend, s.params[p]);
      double err = 0, norm = 0;
      // Check a spread of elements of every parameter (all of the small ones).
      const size_t stride = std::max<size_t>(1, w.size() / 12);
      for (size_t i = 0; i < w.size(); i += stride) {
        const double h = 1e-6, keep = w[i];
        w[i] = keep + h;
        upload(backend, s.params[p], w);
        const double lp = loss(ex, s, x, dy);
        w[i] = keep - h;
        upload(backend, s.params[p], w);
        const double lm = loss(ex, s, x, dy);
        w[i] = keep;
        upload(backend, s.params[p], w);
        const double numeric = (lp - lm) / (2 * h);
        err = std::max(err, std::fabs(numeric - analytic[i]));
        norm = std::max(norm, std::fabs(analytic[i]));
      }
      EXPECT_LE(err, 1e-6 * std::max(1.0, norm)) << g.params[p].name;
    }
  }
}

TEST(Executor, ReferenceAllocatorPeakEqualsTheMemoryModel) {
  for (const auto& [block, v] : gradient_cases()) {
    for (bool training : {true, false}) {
      SCOPED_TRACE(v.name + (training ? " train" : " infer") + " dims=" + std::to_string(block.dims) +
                   (block.residual ? " residual" : "") + (block.dropout > 0 ? " dropout" : ""));
      BlockSpec b = block;
      b.dtype = DType::float32;
      b.mode = training ? RunMode::train : RunMode::infer;
      ReferenceBackend backend;
      testing::expect_measured_equals_predicted(backend, build_variant_graph(b, v), training);
    }
  }
}

TEST(Executor, AddWithBothOperandsFromOneValueAccumulatesOutOfPlace) {
  // y = relu(conv(x)); out = y + y: the add passes one gradient tensor to both operands, so the
  // second arrival must not be added in place into the first.
  BlockSpec b = small_block(2, 2, 2, 4);
  b.dtype = DType::float64;
  VariantSpec v = variant("custom", "double");
  CustomOpSpec c;
  c.op = "conv";
  c.name = "c";
  c.inputs = {"input"};
  CustomOpSpec a;
  a.op = "add";
  a.name = "a";
  a.inputs = {"c", "c"};
  v.ops = {c, a};
  ReferenceBackend backend;
  const Graph g = build_variant_graph(b, v);
  Executor ex(g, backend, true);
  ModelState s = ex.init_state(3);
  Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  fill_uniform(backend, x, 5);
  Tensor dy = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
  fill_uniform(backend, dy, 6);
  ex.forward(s, x);
  ex.backward(s, dy);
  // d(sum(2*conv(x)*dy))/dbias = 2 * sum of dy per channel.
  const std::vector<double> dyv = download(backend, dy), gb = download(backend, s.grads[1]);
  for (int ch = 0; ch < 2; ++ch) {
    double expect = 0;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 16; ++i) expect += 2 * dyv[static_cast<size_t>((n * 2 + ch) * 16 + i)];
    EXPECT_NEAR(gb[static_cast<size_t>(ch)], expect, 1e-12);
  }
  ReferenceBackend fresh;  // the tensors above stay allocated on `backend`
  testing::expect_measured_equals_predicted(fresh, g, true);
}

}  // namespace
}  // namespace convbench

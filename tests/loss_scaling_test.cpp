// GradScaler's dynamic loss scaling under precision amp_float16 (runtime/loss_scaler.hpp): the
// scale's rule, and a step on the reference backend whose tiny gradients float16 would flush to
// zero without it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/reference/reference_backend.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "spec/spec_loader.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

TEST(LossScaler, BacksOffOnInfAndGrowsAfterTheIntervalAsGradScaler) {
  LossScaler s;
  EXPECT_EQ(s.scale, 65536.0);
  s.update(true);
  EXPECT_EQ(s.scale, 32768.0);
  EXPECT_EQ(s.skipped_steps, 1);
  for (int i = 0; i < 1999; ++i) s.update(false);
  EXPECT_EQ(s.scale, 32768.0);
  s.update(false);
  EXPECT_EQ(s.scale, 65536.0);
  EXPECT_EQ(s.growth_tracker, 0);
  s.scale = 3.0;
  EXPECT_EQ(s.inverse(), static_cast<double>(1.0f / 3.0f));  // rounded to float32, as GradScaler's
}

// conv (float16 under autocast) then a 3-D average pool (float32 on the CPU): the block's output,
// and so its upstream gradient, is float32.
Graph block_graph(const std::string& precision_or_dtype, bool float64 = false) {
  const Spec spec = parse_spec_text(
      "blocks:\n  - {name: b, batch: 2, in_channels: 4, out_channels: 8, dims: 3, size: 4, " + precision_or_dtype +
          ",\n     variants: [{kind: custom, name: c, ops: [{op: conv, name: conv, out_channels: 8, bias: false},"
          " {op: avg_pool, name: pool}]}]}\n",
      "scaling.yaml");
  BlockSpec block = spec.blocks.at(0);
  if (float64) block.dtype = DType::float64;  // as verify replays a plain step on reference
  return build_variant_graph(block, block.variants.at(0));
}

struct Step {
  std::vector<double> weight_grad;
  int64_t skipped = 0;
  double scale_after = 0;
};

Step run_step(const Graph& g, const std::vector<double>& x, const std::vector<double>& dy,
              std::optional<double> scale) {
  ReferenceBackend backend;
  Executor ex(g, backend, true);
  ModelState state = ex.init_state(7);
  if (scale) state.loss_scaler->scale = *scale;
  Tensor in = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  upload(backend, in, x);
  Tensor grad = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
  upload(backend, grad, dy);
  ex.forward(state, in);
  ex.backward(state, grad);
  Step s{download(backend, state.grads.at(0))};
  if (state.loss_scaler) {
    s.skipped = state.loss_scaler->skipped_steps;
    s.scale_after = state.loss_scaler->scale;
  }
  return s;
}

double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return std::sqrt(d / n);
}

TEST(LossScaling, KeepsGradientsFloat16WouldFlushToZero) {
  const Graph amp = block_graph("precision: amp_float16");
  const Graph exact = block_graph("precision: plain", true);
  ASSERT_TRUE(uses_loss_scaling(amp, true));
  ASSERT_FALSE(uses_loss_scaling(exact, true));
  ASSERT_EQ(amp.desc(amp.output).dtype, DType::float32);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(static_cast<size_t>(amp.desc(amp.input).numel())),
      dy(static_cast<size_t>(amp.desc(amp.output).numel()));
  for (double& v : x) v = u(rng);
  for (double& v : dy) v = 1e-7 * u(rng);  // after the pool, below float16's smallest subnormal
  const std::vector<double> truth = run_step(exact, x, dy, std::nullopt).weight_grad;
  const Step scaled = run_step(amp, x, dy, std::nullopt);
  EXPECT_EQ(scaled.skipped, 0);
  EXPECT_LT(relative_error(scaled.weight_grad, truth), 1e-2);
  // The same step with a scale of 1: the gradient reaching the float16 conv rounds to zero.
  EXPECT_GT(relative_error(run_step(amp, x, dy, 1.0).weight_grad, truth), 0.5);
}

TEST(LossScaling, AStepThatOverflowsIsSkippedAndTheScaleBacksOff) {
  const Graph amp = block_graph("precision: amp_float16");
  std::vector<double> x(static_cast<size_t>(amp.desc(amp.input).numel()), 1.0),
      dy(static_cast<size_t>(amp.desc(amp.output).numel()), 1.0);
  const Step s = run_step(amp, x, dy, 65536.0 * 4);  // 2^18 > float16's largest, 65504
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.scale_after, 65536.0 * 2);
}

// unscale() takes every gradient at once and leaves what GradScaler allocates for it in `flags`:
// the inverse scale and the found-inf flag (float32 each), so a device backend can read the flag
// back once per step.
TEST(LossScaling, UnscaleFillsGradScalersFlagsForAllGradientsAtOnce) {
  ReferenceBackend reference;
  auto tensor = [&](int64_t n, DType dtype) {
    return make_tensor(reference.allocator(), TensorDesc{{n}, dtype, Layout::channels_first},
                       MemoryCategory::gradients);
  };
  Tensor a = tensor(3, DType::float32), b = tensor(2, DType::float32),
         flags = tensor(kLossScalerStepBytes, DType::uint8);
  upload(reference, a, {1.0, 2.0, 4.0});
  upload(reference, b, {8.0, -16.0});
  EXPECT_TRUE(reference.unscale({&a, &b}, 0.125, flags));
  EXPECT_EQ(download(reference, a), (std::vector<double>{0.125, 0.25, 0.5}));
  EXPECT_EQ(download(reference, b), (std::vector<double>{1.0, -2.0}));
  float held[2];
  reference.copy_to_host(flags, held);
  EXPECT_EQ(held[0], 0.125f);
  EXPECT_EQ(held[1], 0.0f);
  upload(reference, b, {INFINITY, 1.0});
  EXPECT_FALSE(reference.unscale({&a, &b}, 1.0, flags));
  reference.copy_to_host(flags, held);
  EXPECT_EQ(held[1], 1.0f);
}

}  // namespace
}  // namespace convbench

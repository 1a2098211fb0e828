// --conv-fusion conv_bn_stats (backends/conv_fusion.hpp): which convs write the sums of their
// output for the batch norm after them (the graph's rule), the statistics from those sums
// (kernels/batch_norm_math.hpp, which the CUDA kernel runs too), and the executor's and the
// memory model's side: the batch norm's saved statistics made before the conv, filled by it and
// read by the batch norm. Only cuda fuses this (cuDNN's GENSTATS); on this machine a host
// backend below does the same work op by op with the cpu backend's kernels, so that everything
// but cuDNN's fused call is checked here. The cuda backend's fused steps are GpuFusion in
// cuda_backend_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../kernels/batch_norm_math.hpp"  // the repo root is not on the tests' include path
#include "analysis/memory_model.hpp"
#include "backends/backend_registry.hpp"
#include "backends/conv_fusion.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "memory_expectations.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

BlockSpec stats_block(int dims, Layout layout, RunMode mode = RunMode::train) {
  BlockSpec block = testing::small_block(dims, 4, 8, 6);
  block.norm = NormKind::batch;
  block.layout = layout;
  block.mode = mode;
  return block;
}

TEST(ConvBnStatsRule, EveryConvBeforeABatchNormWritesItsSums) {
  EXPECT_EQ(parse_conv_fusion("conv_bn_stats"), ConvFusion::conv_bn_stats);
  EXPECT_EQ(parse_conv_fusion("all"), ConvFusion::all);
  EXPECT_EQ(parse_conv_fusion(to_string(ConvFusion::conv_bn_stats)), ConvFusion::conv_bn_stats);
  EXPECT_TRUE(fuses_bn_statistics(ConvFusion::all) && fuses_activations(ConvFusion::all));
  EXPECT_FALSE(fuses_bn_statistics(ConvFusion::conv_act) || fuses_activations(ConvFusion::conv_bn_stats));
  for (const char* kind : {"standard", "bottleneck", "separable"}) {
    const Graph g = build_variant_graph(stats_block(2, Layout::channels_first), testing::variant(kind));
    int fused = 0;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      std::string why_not;
      const std::optional<ConvEpilogue> e = conv_bn_stats_fusion(g, static_cast<int>(i), &why_not);
      const bool before_bn = i + 1 < g.ops.size() && g.ops[i].kind == OpKind::conv &&
                             g.ops[i + 1].kind == OpKind::batch_norm && g.ops[i + 1].inputs[0] == g.ops[i].output;
      EXPECT_EQ(e.has_value(), before_bn) << kind << " " << g.ops[i].name << ": " << why_not;
      if (!e) {
        EXPECT_FALSE(why_not.empty());
        continue;
      }
      EXPECT_EQ(e->kind, ConvEpilogue::Kind::bn_statistics);
      EXPECT_EQ(e->bn_op, static_cast<int>(i) + 1);
      EXPECT_EQ(e->name(), e->bias ? "bias+bn_stats" : "bn_stats");
      ++fused;
    }
    EXPECT_GT(fused, 0) << kind;
  }
  // A recompute segment runs its forward again in backward: no sums there.
  BlockSpec recompute = stats_block(2, Layout::channels_first);
  recompute.memory_policy.policy = MemoryPolicy::recompute;
  const Graph g = build_variant_graph(recompute, testing::variant("standard"));
  for (size_t i = 0; i < g.ops.size(); ++i) {
    std::string why_not;
    EXPECT_FALSE(conv_bn_stats_fusion(g, static_cast<int>(i), &why_not));
    if (g.ops[i].kind == OpKind::conv && g.ops[i + 1].kind == OpKind::batch_norm) {
      EXPECT_NE(why_not.find("recompute segment"), std::string::npos) << why_not;
    }
  }
}

TEST(ConvBnStatsMath, MomentsFromSumsMatchTheDirectOnes) {
  std::mt19937 rng(3);
  for (double mean : {0.0, 0.5, -3.0})
    for (int count : {2, 7, 1000}) {
      std::normal_distribution<double> dist(mean, 1.5);
      std::vector<double> x(static_cast<size_t>(count));
      double sum = 0, sqsum = 0;
      for (double& v : x) {
        v = dist(rng);
        sum += v;
        sqsum += v * v;
      }
      double m = sum / count, m2 = 0;
      for (double v : x) m2 += (v - m) * (v - m);
      const kernels::ChannelMoments got = kernels::moments_from_sums(sum, sqsum, count);
      EXPECT_NEAR(got.mean, m, 1e-12);
      EXPECT_NEAR(got.biased_var, m2 / count, 1e-9);
      EXPECT_NEAR(got.unbiased_var, m2 / (count - 1), 1e-9);
    }
  // Equal values in float sums: rounding can leave a tiny negative variance, taken as zero.
  const kernels::ChannelMoments flat = kernels::moments_from_sums(3 * 0.1, 3 * 0.1 * 0.1 * (1 - 1e-12), 3);
  EXPECT_EQ(flat.biased_var, 0.0);
  EXPECT_EQ(flat.unbiased_var, 0.0);
}

// The cpu backend's kernels, plus conv_bn_stats done op by op on the host: the conv's call
// writes its output's per-channel sums into the aux the executor made for the batch norm (as
// cuDNN's GENSTATS does into the same tensors), and the batch norm's call finishes them with
// moments_from_sums and normalises. What it checks is the executor's and the memory model's
// side, and the arithmetic the CUDA kernel shares; it gains no time.
class HostSumsBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  Allocator& allocator() override { return cpu_.allocator(); }
  std::optional<std::string> limitation(const Graph& graph, const Op& op) const override {
    return cpu_.limitation(graph, op);
  }
  const KernelTable& kernels() const override { return cpu_.kernels(); }
  // A fusing conv's forward asks for kFusedScratch more, as a fused engine's scratch may: the
  // step's peak is then during that call, where the statistics made early count, so a model or
  // executor that made them at another moment would show in the peak.
  static constexpr int64_t kFusedScratch = int64_t{4} << 20;
  int64_t workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) override {
    const bool fusing = training && phase == Phase::forward && fills_statistics_of(graph, op_index(graph, op)) >= 0;
    return cpu_.workspace_bytes(graph, op, phase, training) + (fusing ? kFusedScratch : 0);
  }
  int fills_statistics_of(const Graph& graph, int index) const override {
    const std::optional<ConvEpilogue> e = conv_bn_stats_fusion(graph, index);
    return e ? e->bn_op : -1;
  }
  void forward(const ForwardCall& call) override {
    const int index = op_index(call.graph, call.op);
    if (ready_ >= 0 && ready_ == index) {
      ready_ = -1;
      ++finished_;
      read_.push_back(call.aux.at(0)->raw());
      return normalise_from_sums(call);
    }
    cpu_.forward(call);
    if (call.filled_aux.empty()) return;
    filled_.push_back(call.filled_aux.at(0)->raw());
    write_sums(*call.output, *call.filled_aux.at(0), *call.filled_aux.at(1));
    ready_ = fills_statistics_of(call.graph, index);
  }
  void backward(const BackwardCall& call) override { cpu_.backward(call); }
  void accumulate(Tensor& dst, const Tensor& src) override { cpu_.accumulate(dst, src); }
  void add(Tensor& out, const Tensor& a, const Tensor& b) override { cpu_.add(out, a, b); }
  void copy_from_host(Tensor& dst, const void* src) override { cpu_.copy_from_host(dst, src); }
  void copy_to_host(const Tensor& src, void* dst) override { cpu_.copy_to_host(src, dst); }
  DeviceMeasurement& measurement() override { return cpu_.measurement(); }

  int finished() const { return finished_; }
  // Per fused pair, the saved mean's storage as the conv filled it and as the batch norm read it.
  const std::vector<const void*>& filled() const { return filled_; }
  const std::vector<const void*>& read() const { return read_; }

 private:
  // The channel of the element at `index` in memory.
  static int64_t channel_at(const TensorDesc& d, int64_t index) {
    const int64_t channels = d.shape.at(1);
    if (d.layout == Layout::channels_last) return index % channels;
    int64_t spatial = 1;
    for (size_t k = 2; k < d.shape.size(); ++k) spatial *= d.shape[k];
    return (index / spatial) % channels;
  }
  static int64_t count(const TensorDesc& d) {
    int64_t n = 1;
    for (int64_t x : d.shape) n *= x;
    return n;
  }

  static void write_sums(const Tensor& y, Tensor& sum, Tensor& sqsum) {
    const int64_t channels = y.desc.shape.at(1);
    std::vector<double> s(static_cast<size_t>(channels)), q(static_cast<size_t>(channels));
    for (int64_t i = 0; i < count(y.desc); ++i) {
      const double v = load_element(y.raw(), i, y.desc.dtype);
      s[static_cast<size_t>(channel_at(y.desc, i))] += v;
      q[static_cast<size_t>(channel_at(y.desc, i))] += v * v;
    }
    for (int64_t c = 0; c < channels; ++c) {  // float, as GENSTATS writes them
      store_element(sum.raw(), c, DType::float32, s[static_cast<size_t>(c)]);
      store_element(sqsum.raw(), c, DType::float32, q[static_cast<size_t>(c)]);
    }
  }

  // Batch norm's training forward from the sums in its saved statistics.
  static void normalise_from_sums(const ForwardCall& call) {
    const Op& op = call.op;
    const Tensor& x = *call.inputs.at(0);
    Tensor& y = *call.output;
    float* mean = call.aux.at(0)->data<float>();
    float* invstd = call.aux.at(1)->data<float>();
    float* running_mean = call.buffers.at(0)->data<float>();
    float* running_var = call.buffers.at(1)->data<float>();
    const int64_t channels = x.desc.shape.at(1), n = count(x.desc);
    for (int64_t c = 0; c < channels; ++c) {
      const kernels::ChannelMoments m =
          kernels::moments_from_sums(mean[c], invstd[c], static_cast<double>(n) / static_cast<double>(channels));
      mean[c] = static_cast<float>(m.mean);
      invstd[c] = static_cast<float>(1.0 / std::sqrt(m.biased_var + op.norm.eps));
      running_mean[c] = static_cast<float>((1.0 - op.norm.momentum) * running_mean[c] + op.norm.momentum * m.mean);
      running_var[c] =
          static_cast<float>((1.0 - op.norm.momentum) * running_var[c] + op.norm.momentum * m.unbiased_var);
    }
    const Tensor& gamma = *call.params.at(0);
    const Tensor& beta = *call.params.at(1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = channel_at(x.desc, i);
      double v = (load_element(x.raw(), i, x.desc.dtype) - mean[c]) * invstd[c] *
                     load_element(gamma.raw(), c, gamma.desc.dtype) +
                 load_element(beta.raw(), c, beta.desc.dtype);
      if (op.kind == OpKind::batch_norm_act && !(v > 0)) v *= op.negative_slope;
      store_element(y.raw(), i, y.desc.dtype, v);
    }
  }

  CpuBackend cpu_;
  int ready_ = -1;
  int finished_ = 0;
  std::vector<const void*> filled_, read_;
};

struct Step {
  std::vector<double> output;
  std::vector<std::vector<double>> grads;
  std::vector<std::vector<double>> buffers;  // the running statistics after the step
};

Step run_step(Backend& backend, const Graph& g) {
  Executor ex(g, backend, true);
  ModelState s = ex.init_state(5);
  Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  fill_uniform(backend, x, 6);
  Step r;
  r.output = download(backend, ex.forward(s, x));
  Tensor dy = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
  fill_uniform(backend, dy, 7);
  ex.backward(s, dy);
  for (const Tensor& t : s.grads) r.grads.push_back(download(backend, t));
  for (const Tensor& t : s.buffers) r.buffers.push_back(download(backend, t));
  return r;
}

// Largest difference relative to the largest value, or to `floor` where that is larger: a conv's
// bias gradient before a batch norm is zero but for rounding (the batch norm removes any
// per-channel constant), so it is compared at the scale of the step's other gradients.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b, double floor = 1e-30) {
  double diff = 0, scale = floor;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return a.size() == b.size() ? diff / scale : 1.0;
}

double largest(const std::vector<std::vector<double>>& tensors) {
  double m = 0;
  for (const std::vector<double>& t : tensors)
    for (double v : t) m = std::max(m, std::abs(v));
  return m;
}

// Statistics from the conv's sums give the step the batch norm's own reduction gives, every
// batch norm after a conv takes them, and the memory measured is the model's, which makes the
// saved statistics before the conv.
TEST(ConvBnStatsExecutor, StepsFromTheConvsSumsEqualTheUnfusedOnesAndTheMemoryModel) {
  for (int dims : {2, 3})
    for (Layout layout : {Layout::channels_first, Layout::channels_last})
      for (const char* kind : {"standard", "bottleneck", "separable"}) {
        const Graph g = build_variant_graph(stats_block(dims, layout), testing::variant(kind));
        SCOPED_TRACE(std::string(kind) + " dims=" + std::to_string(dims) + " " + std::string(to_string(layout)));
        CpuBackend plain;
        HostSumsBackend fused;
        const Step want = run_step(plain, g), got = run_step(fused, g);
        int pairs = 0;
        for (size_t i = 0; i < g.ops.size(); ++i) pairs += fused.fills_statistics_of(g, static_cast<int>(i)) >= 0;
        EXPECT_GT(pairs, 0);
        EXPECT_EQ(fused.finished(), pairs);
        EXPECT_LT(relative_difference(got.output, want.output), 1e-5);
        ASSERT_EQ(got.grads.size(), want.grads.size());
        for (size_t p = 0; p < got.grads.size(); ++p)
          EXPECT_LT(relative_difference(got.grads[p], want.grads[p], largest(want.grads)), 1e-4) << g.params[p].name;
        ASSERT_EQ(got.buffers.size(), want.buffers.size());
        for (size_t b = 0; b < got.buffers.size(); ++b)
          EXPECT_LT(relative_difference(got.buffers[b], want.buffers[b]), 1e-5) << g.buffers[b].name;

        HostSumsBackend measured;
        testing::expect_measured_equals_predicted(measured, g, true);
        // The statistics are the same bytes, made earlier: at the fused conv's call they count.
        const auto ws = [&](const Op& op, Phase ph) { return measured.workspace_bytes(g, op, ph, true); };
        const MemoryPrediction early =
            predict_memory(g, true, ws, [&](int i) { return measured.fills_statistics_of(g, i); });
        const MemoryPrediction late = predict_memory(g, true, ws);
        EXPECT_GT(early.peak_bytes, late.peak_bytes);
        EXPECT_EQ(early.peak_phase, "forward");
        EXPECT_EQ(early.saved_bytes, late.saved_bytes);
      }
}

// The executor hands the batch norm the very tensors the conv filled; inference makes no
// statistics, so nothing is filled there.
TEST(ConvBnStatsExecutor, TheBatchNormReadsTheTensorsTheConvFilled) {
  for (RunMode mode : {RunMode::train, RunMode::infer}) {
    const bool training = mode == RunMode::train;
    const Graph g = build_variant_graph(stats_block(2, Layout::channels_first, mode), testing::variant("bottleneck"));
    HostSumsBackend backend;
    Executor ex(g, backend, training);
    ModelState s = ex.init_state(1);
    Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
    fill_uniform(backend, x, 2);
    ex.forward(s, x);
    EXPECT_EQ(backend.finished(), training ? 3 : 0);
    EXPECT_EQ(backend.filled(), backend.read());
  }
}

TEST(ConvBnStatsOption, OnlyCudaTakesIt) {
  BackendOptions options;
  for (const char* fusion : {"conv_bn_stats", "all"}) {
    options.conv_fusion = fusion;
    try {
      make_backend("cpu", options);
      ADD_FAILURE() << "cpu took --conv-fusion " << fusion;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("oneDNN has no such post-op"), std::string::npos) << e.what();
    }
    EXPECT_THROW(make_backend("reference", options), std::invalid_argument);
    try {  // checked before any GPU is looked for
      make_backend("cuda", options);
      ADD_FAILURE() << "cuda took --conv-fusion " << fusion << " on the legacy API";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("add --cudnn-api graph"), std::string::npos) << e.what();
    }
  }
  options.conv_fusion = "conv_bn";
  try {
    make_backend("cpu", options);
    ADD_FAILURE() << "took --conv-fusion conv_bn";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("none, conv_act, conv_bn_stats or all"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convbench

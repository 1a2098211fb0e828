// convbench's CUDA kernels (kernels/*.cu) on the CPU emulator (kernels/sim/), each host entry
// point of kernels/kernels.hpp against a float64 reference written here from its documented
// semantics: every float dtype, both layouts, shapes with tails, two schedules (seeds) per case.
// Also the emulator's own checks: a missing barrier, divergent barriers, a shuffle a lane never
// reaches and a launch beyond the limits are caught; and EveryKernelIsChecked fails when a
// __global__ function of kernels/ runs in no case (a new kernel needs its case here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/sim/cuda_sim.hpp"
// (the emulator first: it defines what the CUDA headers would)
#include "backends/cuda/fold_program_cuda.hpp"
#include "kernels/kernels.hpp"
#include "kernels/launch.cuh"
#include "ops/fold_eval.hpp"
#include "ops/graph_builder.hpp"
#include "runtime/philox.hpp"
#include "transforms/fold_graph.hpp"

namespace convbench {
namespace {

using kernels::ActShape;
namespace sim = kernels::sim;

constexpr DType kFloatTypes[] = {DType::float32, DType::float16, DType::bfloat16};

// ---- host tensors ------------------------------------------------------------------------------

// A tensor's bytes in its storage dtype, 16-byte aligned as the allocator's blocks are.
class Buffer {
 public:
  Buffer(DType dtype, int64_t count) : dtype_(dtype), count_(count) {
    storage_.resize(static_cast<size_t>(std::max<int64_t>(count * element_bytes(dtype), 1) + 15) / 16);
  }
  Buffer(DType dtype, const std::vector<double>& values) : Buffer(dtype, static_cast<int64_t>(values.size())) {
    for (size_t i = 0; i < values.size(); ++i) set(static_cast<int64_t>(i), values[i]);
  }
  void* data() { return storage_.data(); }
  const void* data() const { return storage_.data(); }
  int64_t count() const { return count_; }
  void set(int64_t i, double v) {
    switch (dtype_) {
      case DType::float16: static_cast<__half*>(data())[i] = __float2half_rn(static_cast<float>(v)); return;
      case DType::bfloat16: static_cast<__nv_bfloat16*>(data())[i] = __float2bfloat16_rn(static_cast<float>(v)); return;
      default: static_cast<float*>(data())[i] = static_cast<float>(v); return;
    }
  }
  double get(int64_t i) const {
    switch (dtype_) {
      case DType::float16: return __half2float(static_cast<const __half*>(data())[i]);
      case DType::bfloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(data())[i]);
      default: return static_cast<const float*>(data())[i];
    }
  }
  std::vector<double> values() const {
    std::vector<double> v(static_cast<size_t>(count_));
    for (int64_t i = 0; i < count_; ++i) v[static_cast<size_t>(i)] = get(i);
    return v;
  }
  // Every element set to a NaN pattern, so that one the kernel does not write is seen.
  void poison() {
    for (int64_t i = 0; i < count_; ++i) set(i, std::nan(""));
  }

 private:
  struct alignas(16) Chunk {
    unsigned char b[16];
  };
  DType dtype_;
  int64_t count_;
  std::vector<Chunk> storage_;
};

std::vector<double> random_values(int64_t count, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = u(rng);
  return v;
}

// Inputs as the kernel sees them: rounded to the dtype.
std::vector<double> rounded(DType dtype, const std::vector<double>& v) { return Buffer(dtype, v).values(); }

// The dtype's rounding of one result, and a little of float's accumulation on top.
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::float16: return 2e-3;
    case DType::bfloat16: return 1.6e-2;
    default: return 2e-5;
  }
}

::testing::AssertionResult close(const std::vector<double>& got, const std::vector<double>& want, DType dtype,
                                 double scale = 1.0) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double limit = tolerance(dtype) * std::max(scale, std::abs(want[i]));
    if (!(std::abs(got[i] - want[i]) <= limit))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got[i] << ", expected " << want[i] << " (within " << limit << ")";
  }
  return ::testing::AssertionSuccess();
}

// Memory position of logical (n, c, sp).
int64_t at(const ActShape& s, int n, int c, int sp) {
  return s.channels_last ? (int64_t{n} * s.s + sp) * s.c + c : (int64_t{n} * s.c + c) * s.s + sp;
}

std::string label(DType dtype, bool channels_last) {
  return std::string(to_string(dtype)) + (channels_last ? " channels_last" : " channels_first");
}

// ---- the cases ------------------------------------------------------------------------------

// Each case runs on the current sim::Device with its own generator.
struct Case {
  const char* name;
  std::function<void(std::mt19937_64&, const std::vector<DType>&)> run;
};

// Tails in both layouts' tiles (3 and 40 channels: not multiples of 32; 37 and 17 positions).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const ActShape kShapes[] = {{.n = 2, .c = 3, .s = 37}, {.n = 3, .c = 40, .s = 17}};

void channel_sum_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      // 5000 rows: more than one chunk per channel in both layouts (channel_reduce_plan).
      for (ActShape s : {kShapes[0], kShapes[1], ActShape{.n = 1, .c = 1, .s = 5000}}) {
        s.channels_last = cl;
        SCOPED_TRACE(label(dtype, cl) + " c=" + std::to_string(s.c) + " s=" + std::to_string(s.s));
        if (s.s == 5000) {
          EXPECT_GT(kernels::channel_reduce_plan(s).splits, 1);
        }
        const auto x = rounded(dtype, random_values(s.numel(), rng));
        Buffer in(dtype, x), out(dtype, s.c);
        out.poison();
        std::vector<unsigned char> ws(static_cast<size_t>(kernels::channel_sum_workspace_bytes(s)) + 16);
        kernels::channel_sum(dtype, s, in.data(), out.data(), ws.data(), nullptr);
        std::vector<double> want(static_cast<size_t>(s.c), 0.0);
        for (int n = 0; n < s.n; ++n)
          for (int c = 0; c < s.c; ++c)
            for (int sp = 0; sp < s.s; ++sp) want[static_cast<size_t>(c)] += x[static_cast<size_t>(at(s, n, c, sp))];
        EXPECT_TRUE(close(out.values(), want, dtype, 10.0));
        // The conv bias: y[n, c, s] += bias[c].
        const auto bias = rounded(dtype, random_values(s.c, rng));
        Buffer b(dtype, bias);
        kernels::add_channel_bias(dtype, s, in.data(), b.data(), nullptr);
        std::vector<double> biased = x;
        for (int n = 0; n < s.n; ++n)
          for (int c = 0; c < s.c; ++c)
            for (int sp = 0; sp < s.s; ++sp)
              biased[static_cast<size_t>(at(s, n, c, sp))] += bias[static_cast<size_t>(c)];
        EXPECT_TRUE(close(in.values(), biased, dtype));
        // layer_scale: out = x * w[c] (weights float32 and, under mixed precision's dtypes, also in
        // the activations' dtype), and the weight gradient sum(g * x) on channel_sum's workspace.
        const auto w = rounded(dtype, random_values(s.c, rng, 0.5, 1.5));
        const auto g = rounded(dtype, random_values(s.numel(), rng));
        Buffer bw(dtype, w), bw32(DType::float32, w), bg(dtype, g), scaled(dtype, s.numel()),
            scaled32(dtype, s.numel());
        Buffer dot(dtype, s.c);
        dot.poison();
        kernels::scale_channels(dtype, dtype, s, bg.data(), bw.data(), scaled.data(), nullptr);
        kernels::scale_channels(dtype, DType::float32, s, bg.data(), bw32.data(), scaled32.data(), nullptr);
        kernels::channel_dot(dtype, s, bg.data(), in.data(), dot.data(), ws.data(), nullptr);
        std::vector<double> want_scaled(g.size()), want_dot(static_cast<size_t>(s.c), 0.0);
        for (int n = 0; n < s.n; ++n)
          for (int c = 0; c < s.c; ++c)
            for (int sp = 0; sp < s.s; ++sp) {
              const auto i = static_cast<size_t>(at(s, n, c, sp));
              want_scaled[i] = g[i] * w[static_cast<size_t>(c)];
              want_dot[static_cast<size_t>(c)] += g[i] * biased[i];
            }
        EXPECT_TRUE(close(scaled.values(), want_scaled, dtype));
        EXPECT_TRUE(close(scaled32.values(), want_scaled, dtype));
        EXPECT_TRUE(close(dot.values(), want_dot, dtype, 10.0));
      }
}

// Batch norm in training: the batch's statistics, the running ones, y; then backward.
void batch_norm_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      for (ActShape s : {ActShape{.n = 2, .c = 5, .s = 29}, ActShape{.n = 4, .c = 33, .s = 9}}) {
        s.channels_last = cl;
        SCOPED_TRACE(label(dtype, cl) + " c=" + std::to_string(s.c));
        const auto x = rounded(dtype, random_values(s.numel(), rng, -2.0, 3.0));
        const auto gamma = rounded(dtype, random_values(s.c, rng, 0.5, 1.5));
        const auto beta = rounded(dtype, random_values(s.c, rng));
        Buffer bx(dtype, x), bg(dtype, gamma), bb(dtype, beta), y(dtype, s.numel());
        std::vector<float> rm(static_cast<size_t>(s.c), 0.1f), rv(static_cast<size_t>(s.c), 2.0f);
        std::vector<float> mean(static_cast<size_t>(s.c)), invstd(static_cast<size_t>(s.c));
        std::vector<unsigned char> ws(static_cast<size_t>(kernels::batch_norm_forward_workspace_bytes(s, true)) + 16);
        const double eps = 1e-5, momentum = 0.1;
        kernels::batch_norm_forward(dtype,
                                    {.shape = s,
                                     .x = bx.data(),
                                     .param_dtype = dtype,
                                     .gamma = bg.data(),
                                     .beta = bb.data(),
                                     .running_mean = rm.data(),
                                     .running_var = rv.data(),
                                     .y = y.data(),
                                     .save_mean = mean.data(),
                                     .save_invstd = invstd.data(),
                                     .eps = eps,
                                     .momentum = momentum,
                                     .training = true},
                                    ws.data(), nullptr);
        const double m = static_cast<double>(s.n) * s.s;
        std::vector<double> want_y(x.size()), want_mean(static_cast<size_t>(s.c)), want_invstd(want_mean);
        std::vector<double> got_rm, got_rv, want_rm, want_rv;
        for (int c = 0; c < s.c; ++c) {
          double sum = 0, sq = 0;
          for (int n = 0; n < s.n; ++n)
            for (int sp = 0; sp < s.s; ++sp) sum += x[static_cast<size_t>(at(s, n, c, sp))];
          const double mu = sum / m;
          for (int n = 0; n < s.n; ++n)
            for (int sp = 0; sp < s.s; ++sp) sq += std::pow(x[static_cast<size_t>(at(s, n, c, sp))] - mu, 2);
          const double var = sq / m, is = 1.0 / std::sqrt(var + eps);
          want_mean[static_cast<size_t>(c)] = mu;
          want_invstd[static_cast<size_t>(c)] = is;
          want_rm.push_back(0.9 * 0.1 + 0.1 * mu);
          want_rv.push_back(0.9 * 2.0 + 0.1 * sq / (m - 1));
          got_rm.push_back(rm[static_cast<size_t>(c)]);
          got_rv.push_back(rv[static_cast<size_t>(c)]);
          for (int n = 0; n < s.n; ++n)
            for (int sp = 0; sp < s.s; ++sp) {
              const size_t i = static_cast<size_t>(at(s, n, c, sp));
              want_y[i] = (x[i] - mu) * is * gamma[static_cast<size_t>(c)] + beta[static_cast<size_t>(c)];
            }
        }
        EXPECT_TRUE(close(std::vector<double>(mean.begin(), mean.end()), want_mean, DType::float32, 1.0));
        EXPECT_TRUE(close(std::vector<double>(invstd.begin(), invstd.end()), want_invstd, DType::float32, 1.0));
        EXPECT_TRUE(close(got_rm, want_rm, DType::float32));
        EXPECT_TRUE(close(got_rv, want_rv, DType::float32));
        EXPECT_TRUE(close(y.values(), want_y, dtype, 2.0));

        // Backward from the saved statistics.
        const auto g = rounded(dtype, random_values(s.numel(), rng));
        Buffer bgrad(dtype, g), gx(dtype, s.numel()), ggamma(dtype, s.c), gbeta(dtype, s.c);
        gx.poison();
        std::vector<unsigned char> bws(static_cast<size_t>(kernels::batch_norm_backward_workspace_bytes(s)) + 16);
        kernels::batch_norm_backward(dtype,
                                     {.shape = s,
                                      .x = bx.data(),
                                      .g = bgrad.data(),
                                      .save_mean = mean.data(),
                                      .save_invstd = invstd.data(),
                                      .param_dtype = dtype,
                                      .gamma = bg.data(),
                                      .grad_x = gx.data(),
                                      .grad_gamma = ggamma.data(),
                                      .grad_beta = gbeta.data()},
                                     bws.data(), nullptr);
        std::vector<double> want_gx(x.size()), want_gg(static_cast<size_t>(s.c)), want_gb(want_gg);
        for (int c = 0; c < s.c; ++c) {
          const double mu = mean[static_cast<size_t>(c)], is = invstd[static_cast<size_t>(c)];
          double sg = 0, sgx = 0;
          for (int n = 0; n < s.n; ++n)
            for (int sp = 0; sp < s.s; ++sp) {
              const size_t i = static_cast<size_t>(at(s, n, c, sp));
              sg += g[i];
              sgx += g[i] * (x[i] - mu) * is;
            }
          want_gg[static_cast<size_t>(c)] = sgx;
          want_gb[static_cast<size_t>(c)] = sg;
          for (int n = 0; n < s.n; ++n)
            for (int sp = 0; sp < s.s; ++sp) {
              const size_t i = static_cast<size_t>(at(s, n, c, sp));
              want_gx[i] = gamma[static_cast<size_t>(c)] * is / m * (m * g[i] - sg - (x[i] - mu) * is * sgx);
            }
        }
        EXPECT_TRUE(close(gx.values(), want_gx, dtype, 2.0));
        EXPECT_TRUE(close(ggamma.values(), want_gg, dtype, 10.0));
        EXPECT_TRUE(close(gbeta.values(), want_gb, dtype, 10.0));

        // --conv-fusion conv_bn_stats: the saved statistics arrive holding the conv's per-channel
        // sum and sum of squares, and become the mean and 1/std.
        std::vector<float> sums(static_cast<size_t>(s.c), 0.0f), squares(sums);
        for (int n = 0; n < s.n; ++n)
          for (int c = 0; c < s.c; ++c)
            for (int sp = 0; sp < s.s; ++sp) {
              const double v = x[static_cast<size_t>(at(s, n, c, sp))];
              sums[static_cast<size_t>(c)] += static_cast<float>(v);
              squares[static_cast<size_t>(c)] += static_cast<float>(v * v);
            }
        std::vector<float> rm2(static_cast<size_t>(s.c), 0.1f), rv2(static_cast<size_t>(s.c), 2.0f);
        Buffer y2(dtype, s.numel());
        kernels::batch_norm_forward(dtype,
                                    {.shape = s,
                                     .x = bx.data(),
                                     .param_dtype = dtype,
                                     .gamma = bg.data(),
                                     .beta = bb.data(),
                                     .running_mean = rm2.data(),
                                     .running_var = rv2.data(),
                                     .y = y2.data(),
                                     .save_mean = sums.data(),
                                     .save_invstd = squares.data(),
                                     .eps = eps,
                                     .momentum = momentum,
                                     .training = true,
                                     .sums_in_saved = true},
                                    ws.data(), nullptr);
        // E[x^2] - mean^2 from float sums: looser than the reduction over x.
        EXPECT_TRUE(close(std::vector<double>(sums.begin(), sums.end()), want_mean, DType::float16, 1.0));
        EXPECT_TRUE(close(std::vector<double>(squares.begin(), squares.end()), want_invstd, DType::float16, 1.0));
        EXPECT_TRUE(close(std::vector<double>(rm2.begin(), rm2.end()), want_rm, DType::float16));
        EXPECT_TRUE(close(y2.values(), want_y, dtype == DType::float32 ? DType::float16 : dtype, 2.0));

        // batch_norm_act (Inplace-ABN): leaky ReLU after the affine, in place, and backward from
        // the output alone.
        const float slope = 0.01f;
        Buffer inplace(dtype, x);
        std::vector<float> rm3(static_cast<size_t>(s.c), 0.1f), rv3(static_cast<size_t>(s.c), 2.0f);
        kernels::batch_norm_forward(dtype,
                                    {.shape = s,
                                     .x = inplace.data(),
                                     .param_dtype = dtype,
                                     .gamma = bg.data(),
                                     .beta = bb.data(),
                                     .running_mean = rm3.data(),
                                     .running_var = rv3.data(),
                                     .y = inplace.data(),
                                     .save_mean = mean.data(),
                                     .save_invstd = invstd.data(),
                                     .eps = eps,
                                     .momentum = momentum,
                                     .training = true,
                                     .leaky = true,
                                     .negative_slope = slope},
                                    ws.data(), nullptr);
        std::vector<double> want_act(want_y);
        for (double& v : want_act) v = v > 0 ? v : slope * v;
        EXPECT_TRUE(close(inplace.values(), want_act, dtype, 2.0));
        const std::vector<double> yact = inplace.values();
        Buffer agx(dtype, s.numel()), agg(dtype, s.c), agb(dtype, s.c);
        kernels::batch_norm_act_backward(dtype,
                                         {.shape = s,
                                          .y = inplace.data(),
                                          .g = bgrad.data(),
                                          .save_invstd = invstd.data(),
                                          .param_dtype = dtype,
                                          .gamma = bg.data(),
                                          .beta = bb.data(),
                                          .negative_slope = slope,
                                          .grad_x = agx.data(),
                                          .grad_gamma = agg.data(),
                                          .grad_beta = agb.data()},
                                         bws.data(), nullptr);
        std::vector<double> want_agx(x.size()), want_agg(static_cast<size_t>(s.c)), want_agb(want_agg);
        for (int c = 0; c < s.c; ++c) {
          const double is = invstd[static_cast<size_t>(c)], gm = gamma[static_cast<size_t>(c)],
                       bt = beta[static_cast<size_t>(c)];
          const auto xhat_dz = [&](size_t i) {
            const double z = yact[i] > 0 ? yact[i] : yact[i] / slope;
            return std::pair{(z - bt) / gm, yact[i] > 0 ? g[i] : slope * g[i]};
          };
          double sdz = 0, sdzx = 0;
          for (int n = 0; n < s.n; ++n)
            for (int sp = 0; sp < s.s; ++sp) {
              const auto [xh, dz] = xhat_dz(static_cast<size_t>(at(s, n, c, sp)));
              sdz += dz;
              sdzx += dz * xh;
            }
          want_agg[static_cast<size_t>(c)] = sdzx;
          want_agb[static_cast<size_t>(c)] = sdz;
          for (int n = 0; n < s.n; ++n)
            for (int sp = 0; sp < s.s; ++sp) {
              const size_t i = static_cast<size_t>(at(s, n, c, sp));
              const auto [xh, dz] = xhat_dz(i);
              want_agx[i] = gm * is / m * (m * dz - sdz - xh * sdzx);
            }
        }
        // From the rounded output, xhat carries the storage dtype's error.
        const DType loose = dtype == DType::float32 ? DType::float16 : dtype;
        EXPECT_TRUE(close(agx.values(), want_agx, loose, 2.0));
        EXPECT_TRUE(close(agg.values(), want_agg, loose, 10.0));
        EXPECT_TRUE(close(agb.values(), want_agb, dtype, 10.0));
      }
}

void group_norm_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      for (int groups : {1, 4}) {
        ActShape s{.n = 2, .c = 8, .s = 45, .channels_last = cl};
        SCOPED_TRACE(label(dtype, cl) + " groups=" + std::to_string(groups));
        const auto x = rounded(dtype, random_values(s.numel(), rng, -1.0, 2.0));
        const auto gamma = rounded(dtype, random_values(s.c, rng, 0.5, 1.5));
        const auto beta = rounded(dtype, random_values(s.c, rng));
        const auto g = rounded(dtype, random_values(s.numel(), rng));
        Buffer bx(dtype, x), bgm(dtype, gamma), bbt(dtype, beta), y(dtype, s.numel()), bg(dtype, g);
        Buffer gx(dtype, s.numel()), ggm(dtype, s.c), gbt(dtype, s.c);
        std::vector<float> mean(static_cast<size_t>(s.n * groups)), rstd(mean.size());
        const double eps = 1e-5;
        std::vector<unsigned char> ws(
            static_cast<size_t>(std::max(kernels::group_norm_forward_workspace_bytes(s, groups),
                                         kernels::group_norm_backward_workspace_bytes(s, groups))) +
            16);
        kernels::group_norm_forward(dtype,
                                    {.shape = s,
                                     .groups = groups,
                                     .x = bx.data(),
                                     .gamma = bgm.data(),
                                     .beta = bbt.data(),
                                     .y = y.data(),
                                     .save_mean = mean.data(),
                                     .save_rstd = rstd.data(),
                                     .eps = eps},
                                    ws.data(), nullptr);
        kernels::group_norm_backward(dtype,
                                     {.shape = s,
                                      .groups = groups,
                                      .x = bx.data(),
                                      .g = bg.data(),
                                      .save_mean = mean.data(),
                                      .save_rstd = rstd.data(),
                                      .gamma = bgm.data(),
                                      .grad_x = gx.data(),
                                      .grad_gamma = ggm.data(),
                                      .grad_beta = gbt.data(),
                                      .eps = eps},
                                     ws.data(), nullptr);
        const int cg = s.c / groups;
        const double m = static_cast<double>(cg) * s.s;
        std::vector<double> want_y(x.size()), want_gx(x.size()), want_gg(static_cast<size_t>(s.c), 0.0),
            want_gb(want_gg);
        for (int n = 0; n < s.n; ++n)
          for (int gr = 0; gr < groups; ++gr) {
            double sum = 0, sq = 0;
            for (int c = gr * cg; c < (gr + 1) * cg; ++c)
              for (int sp = 0; sp < s.s; ++sp) sum += x[static_cast<size_t>(at(s, n, c, sp))];
            const double mu = sum / m;
            for (int c = gr * cg; c < (gr + 1) * cg; ++c)
              for (int sp = 0; sp < s.s; ++sp) sq += std::pow(x[static_cast<size_t>(at(s, n, c, sp))] - mu, 2);
            const double rs = 1.0 / std::sqrt(sq / m + eps);
            double sd = 0, sdx = 0;
            for (int c = gr * cg; c < (gr + 1) * cg; ++c)
              for (int sp = 0; sp < s.s; ++sp) {
                const size_t i = static_cast<size_t>(at(s, n, c, sp));
                const double xh = (x[i] - mu) * rs, d = g[i] * gamma[static_cast<size_t>(c)];
                want_y[i] = xh * gamma[static_cast<size_t>(c)] + beta[static_cast<size_t>(c)];
                sd += d;
                sdx += d * xh;
                want_gg[static_cast<size_t>(c)] += g[i] * xh;
                want_gb[static_cast<size_t>(c)] += g[i];
              }
            for (int c = gr * cg; c < (gr + 1) * cg; ++c)
              for (int sp = 0; sp < s.s; ++sp) {
                const size_t i = static_cast<size_t>(at(s, n, c, sp));
                const double xh = (x[i] - mu) * rs;
                want_gx[i] = rs / m * (m * g[i] * gamma[static_cast<size_t>(c)] - sd - xh * sdx);
              }
          }
        EXPECT_TRUE(close(y.values(), want_y, dtype, 2.0));
        EXPECT_TRUE(close(gx.values(), want_gx, dtype, 2.0));
        EXPECT_TRUE(close(ggm.values(), want_gg, dtype, 10.0));
        EXPECT_TRUE(close(gbt.values(), want_gb, dtype, 10.0));
      }
}

// Layer norm over channels at each position: training forward with its saved statistics, the
// inference forward (statistics in the workspace), then backward.
void layer_norm_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      for (ActShape s : {ActShape{.n = 2, .c = 7, .s = 45}, ActShape{.n = 1, .c = 40, .s = 300}}) {
        s.channels_last = cl;
        SCOPED_TRACE(label(dtype, cl) + " c=" + std::to_string(s.c));
        const auto x = rounded(dtype, random_values(s.numel(), rng, -1.0, 2.0));
        const auto gamma = rounded(dtype, random_values(s.c, rng, 0.5, 1.5));
        const auto beta = rounded(dtype, random_values(s.c, rng));
        const auto g = rounded(dtype, random_values(s.numel(), rng));
        Buffer bx(dtype, x), bgm(dtype, gamma), bbt(dtype, beta), y(dtype, s.numel()), y_eval(dtype, s.numel());
        Buffer bg(dtype, g), gx(dtype, s.numel()), ggm(dtype, s.c), gbt(dtype, s.c);
        gx.poison();
        ggm.poison();
        gbt.poison();
        const int positions = s.n * s.s;
        std::vector<float> mean(static_cast<size_t>(positions)), rstd(mean.size());
        const double eps = 1e-6;
        std::vector<unsigned char> ws(static_cast<size_t>(std::max(kernels::layer_norm_forward_workspace_bytes(s),
                                                                   kernels::layer_norm_backward_workspace_bytes(s))) +
                                      16);
        const kernels::LayerNormForward forward{.shape = s,
                                                .x = bx.data(),
                                                .gamma = bgm.data(),
                                                .beta = bbt.data(),
                                                .y = y.data(),
                                                .save_mean = mean.data(),
                                                .save_rstd = rstd.data(),
                                                .eps = eps};
        kernels::layer_norm_forward(dtype, forward, ws.data(), nullptr);
        kernels::LayerNormForward inference = forward;
        inference.y = y_eval.data();
        inference.save_mean = inference.save_rstd = nullptr;
        kernels::layer_norm_forward(dtype, inference, ws.data(), nullptr);
        kernels::layer_norm_backward(dtype,
                                     {.shape = s,
                                      .x = bx.data(),
                                      .g = bg.data(),
                                      .save_mean = mean.data(),
                                      .save_rstd = rstd.data(),
                                      .gamma = bgm.data(),
                                      .grad_x = gx.data(),
                                      .grad_gamma = ggm.data(),
                                      .grad_beta = gbt.data()},
                                     ws.data(), nullptr);
        std::vector<double> want_y(x.size()), want_gx(x.size()), want_gg(static_cast<size_t>(s.c), 0.0),
            want_gb(want_gg);
        for (int n = 0; n < s.n; ++n)
          for (int sp = 0; sp < s.s; ++sp) {
            double sum = 0, sq = 0;
            for (int c = 0; c < s.c; ++c) sum += x[static_cast<size_t>(at(s, n, c, sp))];
            const double mu = sum / s.c;
            for (int c = 0; c < s.c; ++c) sq += std::pow(x[static_cast<size_t>(at(s, n, c, sp))] - mu, 2);
            const double rs = 1.0 / std::sqrt(sq / s.c + eps);
            EXPECT_NEAR(mean[static_cast<size_t>(n * s.s + sp)], mu, 1e-5);
            EXPECT_NEAR(rstd[static_cast<size_t>(n * s.s + sp)], rs, 1e-5 * rs);
            double sd = 0, sdx = 0;
            for (int c = 0; c < s.c; ++c) {
              const auto i = static_cast<size_t>(at(s, n, c, sp));
              const double xh = (x[i] - mu) * rs, d = g[i] * gamma[static_cast<size_t>(c)];
              want_y[i] = xh * gamma[static_cast<size_t>(c)] + beta[static_cast<size_t>(c)];
              sd += d;
              sdx += d * xh;
              want_gg[static_cast<size_t>(c)] += g[i] * xh;
              want_gb[static_cast<size_t>(c)] += g[i];
            }
            for (int c = 0; c < s.c; ++c) {
              const auto i = static_cast<size_t>(at(s, n, c, sp));
              const double xh = (x[i] - mu) * rs;
              want_gx[i] = rs / s.c * (s.c * g[i] * gamma[static_cast<size_t>(c)] - sd - xh * sdx);
            }
          }
        EXPECT_TRUE(close(y.values(), want_y, dtype, 2.0));
        EXPECT_TRUE(close(y_eval.values(), want_y, dtype, 2.0));
        EXPECT_TRUE(close(gx.values(), want_gx, dtype, 2.0));
        EXPECT_TRUE(close(ggm.values(), want_gg, dtype, 10.0));
        EXPECT_TRUE(close(gbt.values(), want_gb, dtype, 10.0));
      }
}

// Depthwise conv: 2-D and 3-D, strided, padded, dilated, channel multiplier 2.
void depthwise_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  struct Geometry {
    kernels::Dims3 in, kernel, stride, padding, dilation;
    int multiplier;
  };
  const Geometry geometries[] = {
      {{{1, 9, 7}}, {{1, 3, 3}}, {{1, 1, 1}}, {{0, 1, 1}}, {{1, 1, 1}}, 1},
      {{{1, 11, 10}}, {{1, 5, 3}}, {{1, 2, 1}}, {{0, 2, 0}}, {{1, 1, 2}}, 2},
      {{{5, 6, 7}}, {{3, 3, 3}}, {{2, 1, 2}}, {{1, 1, 1}}, {{1, 1, 1}}, 1},
      // 7x7's 49 taps: the channels-last weight gradient adds them in four rounds of 16.
      {{{1, 9, 8}}, {{1, 7, 7}}, {{1, 1, 1}}, {{0, 3, 3}}, {{1, 1, 1}}, 1},
  };
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      for (const Geometry& geo : geometries) {
        kernels::DepthwiseShape s{.n = 2,
                                  .c = 3,
                                  .multiplier = geo.multiplier,
                                  .in = geo.in,
                                  .kernel = geo.kernel,
                                  .stride = geo.stride,
                                  .padding = geo.padding,
                                  .dilation = geo.dilation,
                                  .channels_last = cl};
        for (int d = 0; d < 3; ++d)
          s.out[d] = (s.in[d] + 2 * s.padding[d] - s.dilation[d] * (s.kernel[d] - 1) - 1) / s.stride[d] + 1;
        SCOPED_TRACE(label(dtype, cl) + " kernel " + std::to_string(s.kernel[0]) + "x" + std::to_string(s.kernel[1]) +
                     "x" + std::to_string(s.kernel[2]));
        const int k_channels = s.out_channels(), taps = s.taps();
        const int in_sp = s.in[0] * s.in[1] * s.in[2], out_sp = s.out[0] * s.out[1] * s.out[2];
        const ActShape xs{.n = s.n, .c = s.c, .s = in_sp, .channels_last = cl};
        const ActShape ys{.n = s.n, .c = k_channels, .s = out_sp, .channels_last = cl};
        const auto x = rounded(dtype, random_values(xs.numel(), rng));
        const auto w = rounded(dtype, random_values(int64_t{k_channels} * taps, rng));
        const auto bias = rounded(dtype, random_values(k_channels, rng));
        const auto dy = rounded(dtype, random_values(ys.numel(), rng));
        Buffer bx(dtype, x), bw(dtype, w), bb(dtype, bias), by(dtype, ys.numel()), bdy(dtype, dy);
        Buffer dx(dtype, xs.numel()), dw(dtype, int64_t{k_channels} * taps);
        by.poison();
        dx.poison();
        dw.poison();
        std::vector<unsigned char> ws(static_cast<size_t>(kernels::depthwise_workspace_bytes(s, true)) + 16);
        kernels::depthwise_conv_forward(dtype, s, bx.data(), bw.data(), bb.data(), by.data(), nullptr);
        kernels::depthwise_conv_grad_input(dtype, s, bw.data(), bdy.data(), dx.data(), nullptr);
        kernels::depthwise_conv_grad_weight(dtype, s, bx.data(), bdy.data(), dw.data(), ws.data(), nullptr);
        std::vector<double> want_y(static_cast<size_t>(ys.numel()), 0.0), want_dx(x.size(), 0.0),
            want_dw(w.size(), 0.0);
        for (int n = 0; n < s.n; ++n)
          for (int k = 0; k < k_channels; ++k) {
            const int c = k / s.multiplier;
            for (int o0 = 0; o0 < s.out[0]; ++o0)
              for (int o1 = 0; o1 < s.out[1]; ++o1)
                for (int o2 = 0; o2 < s.out[2]; ++o2) {
                  const int osp = (o0 * s.out[1] + o1) * s.out[2] + o2;
                  const size_t yi = static_cast<size_t>(at(ys, n, k, osp));
                  double acc = bias[static_cast<size_t>(k)];
                  for (int t0 = 0; t0 < s.kernel[0]; ++t0)
                    for (int t1 = 0; t1 < s.kernel[1]; ++t1)
                      for (int t2 = 0; t2 < s.kernel[2]; ++t2) {
                        const int i0 = o0 * s.stride[0] - s.padding[0] + t0 * s.dilation[0];
                        const int i1 = o1 * s.stride[1] - s.padding[1] + t1 * s.dilation[1];
                        const int i2 = o2 * s.stride[2] - s.padding[2] + t2 * s.dilation[2];
                        if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= s.in[0] || i1 >= s.in[1] || i2 >= s.in[2]) continue;
                        const size_t xi = static_cast<size_t>(at(xs, n, c, (i0 * s.in[1] + i1) * s.in[2] + i2));
                        const size_t wi = static_cast<size_t>(k * taps + (t0 * s.kernel[1] + t1) * s.kernel[2] + t2);
                        acc += x[xi] * w[wi];
                        want_dx[xi] += dy[yi] * w[wi];
                        want_dw[wi] += dy[yi] * x[xi];
                      }
                  want_y[yi] = acc;
                }
          }
        EXPECT_TRUE(close(by.values(), want_y, dtype, 3.0));
        EXPECT_TRUE(close(dx.values(), want_dx, dtype, 3.0));
        EXPECT_TRUE(close(dw.values(), want_dw, dtype, 20.0));
      }
}

// Global average pooling and the squeeze-excitation multiply: mul with a per-(n, c) operand and
// the broadcast operand's gradient; mul of equal shapes.
void pool_and_mul_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      for (ActShape s : kShapes) {
        s.channels_last = cl;
        SCOPED_TRACE(label(dtype, cl) + " c=" + std::to_string(s.c) + " s=" + std::to_string(s.s));
        const int nc = s.n * s.c;
        const auto x = rounded(dtype, random_values(s.numel(), rng));
        const auto b = rounded(dtype, random_values(nc, rng));
        const auto g = rounded(dtype, random_values(s.numel(), rng));
        const auto gy = rounded(dtype, random_values(nc, rng));
        Buffer bx(dtype, x), bbr(dtype, b), bg(dtype, g), bgy(dtype, gy);
        Buffer pooled(dtype, nc), gpool(dtype, s.numel()), prod(dtype, s.numel()), gb(dtype, nc),
            prod2(dtype, s.numel());
        kernels::global_avg_pool_forward(dtype, s, bx.data(), pooled.data(), nullptr);
        kernels::global_avg_pool_backward(dtype, s, bgy.data(), gpool.data(), nullptr);
        kernels::mul(dtype, s, true, bx.data(), bbr.data(), prod.data(), nullptr);
        kernels::mul_grad_b_broadcast(dtype, s, bg.data(), bx.data(), gb.data(), nullptr);
        kernels::mul(dtype, s, false, bx.data(), bg.data(), prod2.data(), nullptr);
        std::vector<double> want_pool(static_cast<size_t>(nc), 0.0), want_gpool(x.size()), want_prod(x.size()),
            want_gb(static_cast<size_t>(nc), 0.0), want_prod2(x.size());
        for (int n = 0; n < s.n; ++n)
          for (int c = 0; c < s.c; ++c) {
            const size_t j = static_cast<size_t>(n * s.c + c);
            for (int sp = 0; sp < s.s; ++sp) {
              const size_t i = static_cast<size_t>(at(s, n, c, sp));
              want_pool[j] += x[i] / s.s;
              want_gpool[i] = gy[j] / s.s;
              want_prod[i] = x[i] * b[j];
              want_gb[j] += g[i] * x[i];
              want_prod2[i] = x[i] * g[i];
            }
          }
        EXPECT_TRUE(close(pooled.values(), want_pool, dtype));
        EXPECT_TRUE(close(gpool.values(), want_gpool, dtype, 1e-3));
        EXPECT_TRUE(close(prod.values(), want_prod, dtype));
        EXPECT_TRUE(close(gb.values(), want_gb, dtype, 10.0));
        EXPECT_TRUE(close(prod2.values(), want_prod2, dtype));
      }
}

// The activations forward and backward, the elementwise arithmetic, GradScaler's scale and
// unscale, and casts between the float dtypes; odd counts and an offset operand exercise the
// unaligned and tail paths of the 16-byte fragments.
void elementwise_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  const double kTanhScale = std::sqrt(2.0 / M_PI);
  for (DType dtype : dtypes)
    for (int count : {1, 37, 1000}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " count " + std::to_string(count));
      // a crosses every piece of the activations (hardswish's -3 and 3, relu6's 6)
      const auto a = rounded(dtype, random_values(count, rng, -8.0, 8.0));
      const auto b = rounded(dtype, random_values(count, rng, -3.0, 3.0));
      Buffer ba(dtype, a), bb(dtype, b), out(dtype, count);
      std::vector<Op> activations;
      for (OpKind kind : kernels::activation_kinds()) {
        Op op;
        op.kind = kind;
        op.negative_slope = 0.01;
        activations.push_back(op);
      }
      Op gelu_tanh;  // and gelu's tanh form
      gelu_tanh.kind = OpKind::gelu;
      gelu_tanh.gelu_approximate = GeluApproximation::tanh;
      activations.push_back(gelu_tanh);
      for (const Op& op : activations) {
        const OpKind kind = op.kind;
        const bool tanh_form = op.gelu_approximate == GeluApproximation::tanh;
        SCOPED_TRACE(std::string(to_string(kind)) + (tanh_form ? " (tanh)" : ""));
        const auto forward = [&](double v) {
          switch (kind) {
            case OpKind::relu: return v > 0 ? v : 0.0;
            case OpKind::leaky_relu: return v > 0 ? v : 0.01 * v;
            case OpKind::sigmoid: return 1.0 / (1.0 + std::exp(-v));
            case OpKind::silu: return v / (1.0 + std::exp(-v));
            case OpKind::hardswish: return v * std::clamp(v + 3.0, 0.0, 6.0) / 6.0;
            case OpKind::hardsigmoid: return std::clamp(v + 3.0, 0.0, 6.0) / 6.0;
            case OpKind::relu6: return std::clamp(v, 0.0, 6.0);
            case OpKind::gelu:
              if (tanh_form) return 0.5 * v * (1.0 + std::tanh(kTanhScale * (v + 0.044715 * v * v * v)));
              return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
            default: ADD_FAILURE() << "no expected values for this activation"; return 0.0;
          }
        };
        kernels::activation_forward(op, dtype, ba.data(), out.data(), count, nullptr);
        std::vector<double> want(a.size()), saved(a.size());
        for (size_t i = 0; i < a.size(); ++i) want[i] = forward(a[i]);
        EXPECT_TRUE(close(out.values(), want, dtype));
        // Backward reads the saved tensor its definition names: relu and sigmoid their output,
        // the others their input.
        const std::vector<double> y = out.values();
        const bool reads_output = kind == OpKind::relu || kind == OpKind::sigmoid;
        const Buffer& saved_buffer = reads_output ? out : ba;
        Buffer gx(dtype, count);
        kernels::activation_backward(op, dtype, saved_buffer.data(), bb.data(), gx.data(), count, nullptr);
        for (size_t i = 0; i < a.size(); ++i) {
          const double x = a[i], g = b[i];
          switch (kind) {
            case OpKind::relu: want[i] = y[i] > 0 ? g : 0.0; break;
            case OpKind::leaky_relu: want[i] = x > 0 ? g : 0.01 * g; break;
            case OpKind::sigmoid: want[i] = g * y[i] * (1.0 - y[i]); break;
            case OpKind::silu: {
              const double sig = 1.0 / (1.0 + std::exp(-x));
              want[i] = g * sig * (1.0 + x * (1.0 - sig));
              break;
            }
            case OpKind::hardswish: want[i] = x < -3.0 ? 0.0 : x <= 3.0 ? g * (x / 3.0 + 0.5) : g; break;
            case OpKind::hardsigmoid: want[i] = x > -3.0 && x < 3.0 ? g / 6.0 : 0.0; break;
            case OpKind::relu6: want[i] = x > 0.0 && x < 6.0 ? g : 0.0; break;
            case OpKind::gelu: {
              if (tanh_form) {
                const double t = std::tanh(kTanhScale * (x + 0.044715 * x * x * x));
                want[i] = g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kTanhScale * (1.0 + 3 * 0.044715 * x * x));
                break;
              }
              const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
              want[i] = g * (0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * pdf);
              break;
            }
            default: ADD_FAILURE() << "no expected gradient for this activation"; break;
          }
        }
        EXPECT_TRUE(close(gx.values(), want, dtype));
      }
      std::vector<double> want(a.size());
      kernels::add(dtype, ba.data(), bb.data(), out.data(), count, nullptr);
      for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] + b[i];
      EXPECT_TRUE(close(out.values(), want, dtype));
      kernels::sub(dtype, ba.data(), bb.data(), out.data(), count, nullptr);
      for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] - b[i];
      EXPECT_TRUE(close(out.values(), want, dtype));
      kernels::negate(dtype, ba.data(), out.data(), count, nullptr);
      for (size_t i = 0; i < a.size(); ++i) want[i] = -a[i];
      EXPECT_TRUE(close(out.values(), want, dtype));
      Buffer acc(dtype, a);
      kernels::accumulate(dtype, acc.data(), bb.data(), count, nullptr);
      for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] + b[i];
      EXPECT_TRUE(close(acc.values(), want, dtype));
      for (double value : {0.0, -0.0, 1.5}) {
        out.poison();
        kernels::fill(dtype, out.data(), value, count, nullptr);
        for (int64_t i = 0; i < count; ++i) {
          ASSERT_EQ(out.get(i), value) << "fill " << value << " at " << i;
          ASSERT_EQ(std::signbit(out.get(i)), std::signbit(value)) << "fill " << value << " at " << i;
        }
      }
      kernels::scale(dtype, ba.data(), out.data(), 1024.0f, count, nullptr);
      for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] * 1024.0;
      EXPECT_TRUE(close(out.values(), want, dtype));
      // Casts to every other float dtype, from an operand one element past an aligned block.
      for (DType to : kFloatTypes) {
        if (count < 2) continue;
        Buffer src(dtype, a), dst(to, count - 1);
        const void* from = static_cast<const unsigned char*>(src.data()) + element_bytes(dtype);
        kernels::cast(dtype, to, count - 1, from, dst.data(), nullptr);
        std::vector<double> w(a.begin() + 1, a.end());
        EXPECT_TRUE(close(dst.values(), rounded(to, w), to)) << "cast to " << to_string(to);
      }
    }
  // unscale: t *= inverse, found_inf set by a non-finite element only.
  for (bool with_inf : {false, true}) {
    std::vector<float> t = {1.0f, -2.0f, 4.0f, 8.0f, 3.0f};
    if (with_inf) t[3] = std::numeric_limits<float>::infinity();
    float found = 0.0f;
    kernels::unscale(t.data(), 0.5f, &found, static_cast<int>(t.size()), nullptr);
    EXPECT_EQ(found, with_inf ? 1.0f : 0.0f);
    EXPECT_EQ(t[0], 0.5f);
    EXPECT_EQ(t[1], -1.0f);
  }
}

// add_any: operands in different dtypes and layouts, the sum in a third.
void add_any_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  const ActShape s{.n = 2, .c = 5, .s = 23};
  const auto a = random_values(s.numel(), rng), b = random_values(s.numel(), rng);
  for (DType da : dtypes)
    for (DType db : dtypes)
      for (bool cl_out : {false, true}) {
        const auto ra = rounded(da, a), rb = rounded(db, b);
        // a channels-first, b channels-last.
        Buffer ba(da, ra), bb(db, s.numel());
        const ActShape last{.n = s.n, .c = s.c, .s = s.s, .channels_last = true};
        for (int n = 0; n < s.n; ++n)
          for (int c = 0; c < s.c; ++c)
            for (int sp = 0; sp < s.s; ++sp) bb.set(at(last, n, c, sp), rb[static_cast<size_t>(at(s, n, c, sp))]);
        Buffer out(DType::float32, s.numel());
        kernels::add_any({ba.data(), da, false}, {bb.data(), db, true}, out.data(), DType::float32, cl_out, s, nullptr);
        const ActShape os{.n = s.n, .c = s.c, .s = s.s, .channels_last = cl_out};
        std::vector<double> want(a.size());
        for (int n = 0; n < s.n; ++n)
          for (int c = 0; c < s.c; ++c)
            for (int sp = 0; sp < s.s; ++sp)
              want[static_cast<size_t>(at(os, n, c, sp))] =
                  ra[static_cast<size_t>(at(s, n, c, sp))] + rb[static_cast<size_t>(at(s, n, c, sp))];
        EXPECT_TRUE(close(out.values(), want, DType::float32)) << to_string(da) << " + " << to_string(db);
      }
}

// Dropout, channel dropout and drop path: the kept elements are the ones dropout_keep names,
// scaled; the backward passes the gradient through the same decisions.
void dropout_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true}) {
      const ActShape s{.n = 2, .c = 6, .s = 41, .channels_last = cl};
      SCOPED_TRACE(label(dtype, cl));
      const float p = 0.3f, scale = 1.0f / (1.0f - p);
      const uint64_t seed = rng();
      const auto x = rounded(dtype, random_values(s.numel(), rng));
      const auto g = rounded(dtype, random_values(s.numel(), rng));
      Buffer bx(dtype, x), bg(dtype, g), y(dtype, s.numel()), gx(dtype, s.numel());
      std::vector<uint8_t> mask(static_cast<size_t>(s.numel()), 7);
      kernels::dropout_forward(dtype, s, bx.data(), y.data(), mask.data(), p, scale, seed, nullptr);
      kernels::dropout_backward(dtype, bg.data(), mask.data(), gx.data(), scale, s.numel(), nullptr);
      Buffer cy(dtype, s.numel()), noise(dtype, s.n * s.c), cgx(dtype, s.numel());
      kernels::unit_dropout_forward(dtype, s, bx.data(), cy.data(), noise.data(), p, scale, seed,
                                    kernels::NoiseUnit::channel, nullptr);
      kernels::unit_dropout_backward(dtype, s, bg.data(), noise.data(), cgx.data(), kernels::NoiseUnit::channel,
                                     nullptr);
      Buffer sy(dtype, s.numel()), sample_noise(dtype, s.n), sgx(dtype, s.numel());
      kernels::unit_dropout_forward(dtype, s, bx.data(), sy.data(), sample_noise.data(), p, scale, seed,
                                    kernels::NoiseUnit::sample, nullptr);
      kernels::unit_dropout_backward(dtype, s, bg.data(), sample_noise.data(), sgx.data(), kernels::NoiseUnit::sample,
                                     nullptr);
      std::vector<double> want_y(x.size()), want_gx(x.size()), want_cy(x.size()), want_cgx(x.size());
      std::vector<double> want_sy(x.size()), want_sgx(x.size()), want_noise(static_cast<size_t>(s.n));
      for (int n = 0; n < s.n; ++n)
        for (int c = 0; c < s.c; ++c)
          for (int sp = 0; sp < s.s; ++sp) {
            const size_t i = static_cast<size_t>(at(s, n, c, sp));
            const uint64_t logical = (uint64_t(n) * s.c + c) * s.s + sp;
            const bool keep = dropout_keep(logical, seed, p);
            EXPECT_EQ(mask[i], keep ? 1 : 0) << "mask at " << i;
            want_y[i] = keep ? x[i] * scale : 0.0;
            want_gx[i] = keep ? g[i] * scale : 0.0;
            const bool channel = dropout_keep(uint64_t(n) * s.c + c, seed, p);
            want_cy[i] = channel ? x[i] * scale : 0.0;
            want_cgx[i] = channel ? g[i] * scale : 0.0;
            const bool sample = dropout_keep(uint64_t(n), seed, p);
            want_sy[i] = sample ? x[i] * scale : 0.0;
            want_sgx[i] = sample ? g[i] * scale : 0.0;
            want_noise[static_cast<size_t>(n)] = sample ? scale : 0.0;
          }
      EXPECT_TRUE(close(y.values(), want_y, dtype));
      EXPECT_TRUE(close(gx.values(), want_gx, dtype));
      EXPECT_TRUE(close(cy.values(), want_cy, dtype));
      EXPECT_TRUE(close(cgx.values(), want_cgx, dtype));
      EXPECT_TRUE(close(sy.values(), want_sy, dtype));
      EXPECT_TRUE(close(sgx.values(), want_sgx, dtype));
      EXPECT_TRUE(close(sample_noise.values(), want_noise, dtype));
    }
}

// Spatial index of (d, h, w) in a plane of sizes `dims`.
int plane_index(const kernels::Dims3& dims, int d, int h, int w) { return (d * dims[1] + h) * dims[2] + w; }
int plane_size(const kernels::Dims3& dims) { return dims[0] * dims[1] * dims[2]; }

// Average (count_include_pad) and max pooling forward and backward, 2-D and 3-D, padded.
void pooling_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  struct Geometry {
    kernels::Dims3 in, kernel, stride, padding;
  };
  const Geometry geometries[] = {{{{1, 9, 8}}, {{1, 3, 3}}, {{1, 2, 2}}, {{0, 1, 1}}},
                                 {{{5, 4, 6}}, {{2, 2, 3}}, {{2, 1, 2}}, {{0, 1, 1}}}};
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      for (const Geometry& geo : geometries) {
        kernels::PoolShape p{.n = 2,
                             .c = 3,
                             .in = geo.in,
                             .kernel = geo.kernel,
                             .stride = geo.stride,
                             .padding = geo.padding,
                             .channels_last = cl};
        for (int d = 0; d < 3; ++d) p.out[d] = (p.in[d] + 2 * p.padding[d] - p.kernel[d]) / p.stride[d] + 1;
        SCOPED_TRACE(label(dtype, cl) + " in " + std::to_string(p.in[0]) + "x" + std::to_string(p.in[1]));
        const ActShape xs{.n = p.n, .c = p.c, .s = plane_size(p.in), .channels_last = cl};
        const ActShape ys{.n = p.n, .c = p.c, .s = plane_size(p.out), .channels_last = cl};
        const auto x = rounded(dtype, random_values(xs.numel(), rng));
        const auto g = rounded(dtype, random_values(ys.numel(), rng));
        Buffer bx(dtype, x), bg(dtype, g), avg(dtype, ys.numel()), mx(dtype, ys.numel());
        Buffer gavg(dtype, xs.numel()), gmax(dtype, xs.numel()), gmax_again(dtype, xs.numel());
        std::vector<int64_t> indices(static_cast<size_t>(ys.numel()), -1);
        kernels::avg_pool_forward(dtype, p, bx.data(), avg.data(), nullptr);
        kernels::avg_pool_backward(dtype, p, bg.data(), gavg.data(), nullptr);
        kernels::max_pool_forward(dtype, p, bx.data(), mx.data(), indices.data(), nullptr);
        kernels::max_pool_backward(dtype, p, bg.data(), indices.data(), bx.data(), gmax.data(), nullptr);
        kernels::max_pool_backward(dtype, p, bg.data(), nullptr, bx.data(), gmax_again.data(), nullptr);
        std::vector<double> want_avg(static_cast<size_t>(ys.numel())), want_max(want_avg), want_gavg(x.size(), 0.0),
            want_gmax(x.size(), 0.0);
        const double volume = p.kernel[0] * p.kernel[1] * p.kernel[2];
        for (int n = 0; n < p.n; ++n)
          for (int c = 0; c < p.c; ++c)
            for (int o0 = 0; o0 < p.out[0]; ++o0)
              for (int o1 = 0; o1 < p.out[1]; ++o1)
                for (int o2 = 0; o2 < p.out[2]; ++o2) {
                  const size_t yi = static_cast<size_t>(at(ys, n, c, plane_index(p.out, o0, o1, o2)));
                  double sum = 0, best = -INFINITY;
                  int best_at = -1;
                  for (int t0 = 0; t0 < p.kernel[0]; ++t0)
                    for (int t1 = 0; t1 < p.kernel[1]; ++t1)
                      for (int t2 = 0; t2 < p.kernel[2]; ++t2) {
                        const int i0 = o0 * p.stride[0] - p.padding[0] + t0, i1 = o1 * p.stride[1] - p.padding[1] + t1,
                                  i2 = o2 * p.stride[2] - p.padding[2] + t2;
                        if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= p.in[0] || i1 >= p.in[1] || i2 >= p.in[2]) continue;
                        const int sp = plane_index(p.in, i0, i1, i2);
                        const size_t xi = static_cast<size_t>(at(xs, n, c, sp));
                        sum += x[xi];
                        want_gavg[xi] += g[yi] / volume;
                        if (x[xi] > best) {
                          best = x[xi];
                          best_at = sp;
                        }
                      }
                  want_avg[yi] = sum / volume;
                  want_max[yi] = best;
                  EXPECT_EQ(indices[yi], best_at) << "max pool index of output " << yi;
                  want_gmax[static_cast<size_t>(at(xs, n, c, best_at))] += g[yi];
                }
        EXPECT_TRUE(close(avg.values(), want_avg, dtype));
        EXPECT_TRUE(close(mx.values(), want_max, dtype));
        EXPECT_TRUE(close(gavg.values(), want_gavg, dtype, 1.0));
        EXPECT_TRUE(close(gmax.values(), want_gmax, dtype, 1.0));
        EXPECT_TRUE(close(gmax_again.values(), want_gmax, dtype, 1.0));
      }
}

// One output position's two source positions and weights along one dim, as PyTorch's
// upsample_{bi,tri}linear computes them (written here, not taken from ops/upsample_taps.hpp).
struct Taps {
  int i0, i1;
  double w0, w1;
};
Taps linear_taps(int in, int out, int o, bool align_corners) {
  double src;
  if (align_corners) {
    src = out > 1 ? o * static_cast<double>(in - 1) / (out - 1) : 0.0;
  } else {
    src = std::max(0.0, (o + 0.5) * static_cast<double>(in) / out - 0.5);
  }
  const int i0 = std::min(static_cast<int>(std::floor(src)), in - 1);
  const int i1 = std::min(i0 + 1, in - 1);
  const double l1 = src - i0;
  return {i0, i1, 1.0 - l1, l1};
}

void upsample_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true})
      for (bool three_d : {false, true}) {
        SCOPED_TRACE(label(dtype, cl) + (three_d ? " 3-D" : " 2-D"));
        // Nearest, by 2.
        kernels::UpsampleShape u{.n = 2, .c = 3, .in = {{three_d ? 2 : 1, 3, 5}}, .scale = 2, .channels_last = cl};
        u.out = {{three_d ? 4 : 1, 6, 10}};
        const ActShape xs{.n = u.n, .c = u.c, .s = plane_size(u.in), .channels_last = cl};
        const ActShape ys{.n = u.n, .c = u.c, .s = plane_size(u.out), .channels_last = cl};
        const auto x = rounded(dtype, random_values(xs.numel(), rng));
        const auto g = rounded(dtype, random_values(ys.numel(), rng));
        Buffer bx(dtype, x), bg(dtype, g), y(dtype, ys.numel()), gx(dtype, xs.numel());
        kernels::upsample_forward(dtype, u, bx.data(), y.data(), nullptr);
        kernels::upsample_backward(dtype, u, bg.data(), gx.data(), nullptr);
        std::vector<double> want_y(static_cast<size_t>(ys.numel())), want_gx(x.size(), 0.0);
        for (int n = 0; n < u.n; ++n)
          for (int c = 0; c < u.c; ++c)
            for (int o0 = 0; o0 < u.out[0]; ++o0)
              for (int o1 = 0; o1 < u.out[1]; ++o1)
                for (int o2 = 0; o2 < u.out[2]; ++o2) {
                  const int i0 = three_d ? o0 / 2 : 0;
                  const size_t yi = static_cast<size_t>(at(ys, n, c, plane_index(u.out, o0, o1, o2)));
                  const size_t xi = static_cast<size_t>(at(xs, n, c, plane_index(u.in, i0, o1 / 2, o2 / 2)));
                  want_y[yi] = x[xi];
                  want_gx[xi] += g[yi];
                }
        EXPECT_TRUE(close(y.values(), want_y, dtype));
        EXPECT_TRUE(close(gx.values(), want_gx, dtype, 1.0));
        // Linear, to sizes that are not multiples, both corner rules.
        for (bool corners : {false, true}) {
          SCOPED_TRACE(corners ? "align_corners" : "half-pixel");
          kernels::UpsampleShape l{.n = 2,
                                   .c = 3,
                                   .in = {{three_d ? 3 : 1, 4, 5}},
                                   .channels_last = cl,
                                   .linear = true,
                                   .align_corners = corners};
          l.out = {{three_d ? 5 : 1, 7, 9}};
          const ActShape lx{.n = l.n, .c = l.c, .s = plane_size(l.in), .channels_last = cl};
          const ActShape ly{.n = l.n, .c = l.c, .s = plane_size(l.out), .channels_last = cl};
          const auto lxv = rounded(dtype, random_values(lx.numel(), rng));
          const auto lgv = rounded(dtype, random_values(ly.numel(), rng));
          Buffer blx(dtype, lxv), blg(dtype, lgv), lyb(dtype, ly.numel()), lgx(dtype, lx.numel());
          std::vector<unsigned char> ws(static_cast<size_t>(kernels::upsample_linear_backward_workspace_bytes(l)) + 16);
          kernels::upsample_linear_forward(dtype, l, blx.data(), lyb.data(), nullptr);
          kernels::upsample_linear_backward(dtype, l, blg.data(), lgx.data(), ws.data(), nullptr);
          std::vector<double> want_ly(static_cast<size_t>(ly.numel()), 0.0), want_lgx(lxv.size(), 0.0);
          for (int n = 0; n < l.n; ++n)
            for (int c = 0; c < l.c; ++c)
              for (int o0 = 0; o0 < l.out[0]; ++o0)
                for (int o1 = 0; o1 < l.out[1]; ++o1)
                  for (int o2 = 0; o2 < l.out[2]; ++o2) {
                    const Taps t[3] = {linear_taps(l.in[0], l.out[0], o0, corners),
                                       linear_taps(l.in[1], l.out[1], o1, corners),
                                       linear_taps(l.in[2], l.out[2], o2, corners)};
                    const size_t yi = static_cast<size_t>(at(ly, n, c, plane_index(l.out, o0, o1, o2)));
                    for (int a = 0; a < 2; ++a)
                      for (int b = 0; b < 2; ++b)
                        for (int e = 0; e < 2; ++e) {
                          const double w = (a ? t[0].w1 : t[0].w0) * (b ? t[1].w1 : t[1].w0) * (e ? t[2].w1 : t[2].w0);
                          const size_t xi = static_cast<size_t>(at(
                              lx, n, c,
                              plane_index(l.in, a ? t[0].i1 : t[0].i0, b ? t[1].i1 : t[1].i0, e ? t[2].i1 : t[2].i0)));
                          want_ly[yi] += w * lxv[xi];
                          want_lgx[xi] += w * lgv[yi];
                        }
                  }
          EXPECT_TRUE(close(lyb.values(), want_ly, dtype));
          EXPECT_TRUE(close(lgx.values(), want_lgx, dtype, 2.0));
        }
      }
}

// linear: y = x W^T + b, and its three gradients.
void linear_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes) {
    const kernels::LinearShape s{.n = 3, .in = 37, .out = 5};
    SCOPED_TRACE(std::string(to_string(dtype)));
    const auto x = rounded(dtype, random_values(int64_t{s.n} * s.in, rng));
    const auto w = rounded(dtype, random_values(int64_t{s.out} * s.in, rng));
    const auto b = rounded(dtype, random_values(s.out, rng));
    const auto g = rounded(dtype, random_values(int64_t{s.n} * s.out, rng));
    Buffer bx(dtype, x), bw(dtype, w), bb(dtype, b), bg(dtype, g), y(dtype, int64_t{s.n} * s.out);
    Buffer gx(dtype, int64_t{s.n} * s.in), gw(dtype, int64_t{s.out} * s.in), gb(dtype, s.out);
    kernels::linear_forward(dtype, s, bx.data(), bw.data(), bb.data(), y.data(), nullptr);
    kernels::linear_backward(dtype, s, bx.data(), bw.data(), bg.data(), gx.data(), gw.data(), gb.data(), nullptr);
    std::vector<double> want_y(static_cast<size_t>(s.n * s.out)), want_gx(x.size(), 0.0), want_gw(w.size(), 0.0),
        want_gb(static_cast<size_t>(s.out), 0.0);
    for (int n = 0; n < s.n; ++n)
      for (int o = 0; o < s.out; ++o) {
        const size_t yi = static_cast<size_t>(n * s.out + o);
        double acc = b[static_cast<size_t>(o)];
        for (int i = 0; i < s.in; ++i) {
          const size_t xi = static_cast<size_t>(n * s.in + i), wi = static_cast<size_t>(o * s.in + i);
          acc += x[xi] * w[wi];
          want_gx[xi] += g[yi] * w[wi];
          want_gw[wi] += g[yi] * x[xi];
        }
        want_y[yi] = acc;
        want_gb[static_cast<size_t>(o)] += g[yi];
      }
    EXPECT_TRUE(close(y.values(), want_y, dtype, 5.0));
    EXPECT_TRUE(close(gx.values(), want_gx, dtype, 3.0));
    EXPECT_TRUE(close(gw.values(), want_gw, dtype, 3.0));
    EXPECT_TRUE(close(gb.values(), want_gb, dtype, 3.0));
  }
}

// Layout changes: channels-first <-> last, the padded box and its crop, space_to_depth and its
// inverse, and concat's copies into and out of a channel range.
void layout_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (DType dtype : dtypes)
    for (bool cl : {false, true}) {
      SCOPED_TRACE(label(dtype, cl));
      const ActShape s{.n = 2, .c = 5, .s = 21, .channels_last = cl};
      // channel_shuffle (6 channels in 2 and in 3 groups) forward, and backward undoing it.
      for (int groups : {2, 3}) {
        const ActShape t{.n = 2, .c = 6, .s = 7, .channels_last = cl};
        const auto v = rounded(dtype, random_values(t.numel(), rng));
        Buffer bv(dtype, v), shuffled(dtype, t.numel()), back(dtype, t.numel());
        kernels::channel_shuffle(dtype, t, groups, bv.data(), shuffled.data(), false, nullptr);
        kernels::channel_shuffle(dtype, t, groups, shuffled.data(), back.data(), true, nullptr);
        std::vector<double> want_shuffled(v.size());
        const int per_group = t.c / groups;
        for (int n = 0; n < t.n; ++n)
          for (int c = 0; c < t.c; ++c)
            for (int sp = 0; sp < t.s; ++sp)
              want_shuffled[static_cast<size_t>(at(t, n, (c % per_group) * groups + c / per_group, sp))] =
                  v[static_cast<size_t>(at(t, n, c, sp))];
        EXPECT_EQ(shuffled.values(), want_shuffled) << groups << " groups";
        EXPECT_EQ(back.values(), v) << groups << " groups";
      }
      const ActShape other{.n = s.n, .c = s.c, .s = s.s, .channels_last = !cl};
      const auto x = rounded(dtype, random_values(s.numel(), rng));
      Buffer bx(dtype, x), converted(dtype, s.numel());
      kernels::convert_layout(dtype, s, bx.data(), converted.data(), nullptr);
      std::vector<double> want(x.size());
      for (int n = 0; n < s.n; ++n)
        for (int c = 0; c < s.c; ++c)
          for (int sp = 0; sp < s.s; ++sp)
            want[static_cast<size_t>(at(other, n, c, sp))] = x[static_cast<size_t>(at(s, n, c, sp))];
      EXPECT_TRUE(close(converted.values(), want, dtype));

      const kernels::BoxShape box{.n = 2, .c = 3, .small = {{1, 3, 7}}, .big = {{2, 5, 8}}, .channels_last = cl};
      const ActShape small{.n = box.n, .c = box.c, .s = plane_size(box.small), .channels_last = cl};
      const ActShape big{.n = box.n, .c = box.c, .s = plane_size(box.big), .channels_last = cl};
      const auto sv = rounded(dtype, random_values(small.numel(), rng));
      Buffer bs(dtype, sv), bbig(dtype, big.numel()), back(dtype, small.numel());
      bbig.poison();
      kernels::pad_box(dtype, box, bs.data(), bbig.data(), nullptr);
      kernels::crop_box(dtype, box, bbig.data(), back.data(), nullptr);
      std::vector<double> want_big(static_cast<size_t>(big.numel()), 0.0);
      for (int n = 0; n < box.n; ++n)
        for (int c = 0; c < box.c; ++c)
          for (int d = 0; d < box.small[0]; ++d)
            for (int h = 0; h < box.small[1]; ++h)
              for (int w = 0; w < box.small[2]; ++w)
                want_big[static_cast<size_t>(at(big, n, c, plane_index(box.big, d, h, w)))] =
                    sv[static_cast<size_t>(at(small, n, c, plane_index(box.small, d, h, w)))];
      EXPECT_TRUE(close(bbig.values(), want_big, dtype));
      EXPECT_TRUE(close(back.values(), sv, dtype));

      for (bool three_d : {false, true})
        for (bool channel_major : {true, false}) {
          const int b = 2, bd = three_d ? 2 : 1;
          kernels::SpaceToDepthShape st{.n = 2,
                                        .c = 3,
                                        .in = {{three_d ? 4 : 1, 4, 6}},
                                        .b = b,
                                        .bd = bd,
                                        .channel_major = channel_major,
                                        .channels_last = cl};
          st.out = {{st.in[0] / bd, st.in[1] / b, st.in[2] / b}};
          const int block = bd * b * b;
          const ActShape is{.n = st.n, .c = st.c, .s = plane_size(st.in), .channels_last = cl};
          const ActShape os{.n = st.n, .c = st.c * block, .s = plane_size(st.out), .channels_last = cl};
          const auto xv = rounded(dtype, random_values(is.numel(), rng));
          Buffer bxs(dtype, xv), by(dtype, os.numel()), bgx(dtype, is.numel());
          kernels::space_to_depth_forward(dtype, st, bxs.data(), by.data(), nullptr);
          kernels::space_to_depth_backward(dtype, st, by.data(), bgx.data(), nullptr);
          std::vector<double> want_y(static_cast<size_t>(os.numel()));
          for (int n = 0; n < st.n; ++n)
            for (int c = 0; c < st.c; ++c)
              for (int off = 0; off < block; ++off) {
                const int fd = off / (b * b), fh = off / b % b, fw = off % b;
                const int oc = channel_major ? c * block + off : off * st.c + c;
                for (int d = 0; d < st.out[0]; ++d)
                  for (int h = 0; h < st.out[1]; ++h)
                    for (int w = 0; w < st.out[2]; ++w)
                      want_y[static_cast<size_t>(at(os, n, oc, plane_index(st.out, d, h, w)))] = xv[static_cast<size_t>(
                          at(is, n, c, plane_index(st.in, d * bd + fd, h * b + fh, w * b + fw)))];
              }
          EXPECT_TRUE(close(by.values(), want_y, dtype)) << "space_to_depth" << (three_d ? " 3-D" : "");
          EXPECT_TRUE(close(bgx.values(), xv, dtype)) << "its inverse";
        }

      // concat: a 2-channel part at channel 3 of a 6-channel whole, and back.
      const ActShape part{.n = 2, .c = 2, .s = 13, .channels_last = cl};
      const ActShape whole{.n = 2, .c = 6, .s = 13, .channels_last = cl};
      const auto pv = rounded(dtype, random_values(part.numel(), rng));
      Buffer bp(dtype, pv), bw(dtype, whole.numel()), bout(dtype, part.numel());
      bw.poison();
      kernels::concat_copy_in(dtype, part, whole.c, 3, bp.data(), bw.data(), nullptr);
      kernels::concat_copy_out(dtype, part, whole.c, 3, bw.data(), bout.data(), nullptr);
      for (int n = 0; n < part.n; ++n)
        for (int c = 0; c < part.c; ++c)
          for (int sp = 0; sp < part.s; ++sp)
            EXPECT_EQ(bw.get(at(whole, n, c + 3, sp)), pv[static_cast<size_t>(at(part, n, c, sp))]);
      EXPECT_TRUE(close(bout.values(), pv, dtype));
    }
}

// ---- fold programs (kernels/fold.cu through backends/cuda/fold_program_cuda.cpp) ----------------

ConvAttrs conv_attrs(int64_t out, const std::vector<int64_t>& kernel, std::vector<int64_t> stride,
                     std::vector<int64_t> padding, int64_t groups, bool bias) {
  ConvAttrs a;
  a.out_channels = out;
  a.kernel = kernel;
  a.stride = std::move(stride);
  a.padding = std::move(padding);
  a.dilation = std::vector<int64_t>(kernel.size(), 1);
  a.groups = groups;
  a.bias = bias;
  return a;
}

// Graphs whose fold: online programs use every step and the cut: seed 002's SubtractedConv (a
// 1x1 with stride, a depthwise 3x3 minus it, a 3x3 of it, concatenated: composes, a negative
// accumulate at a channel offset, dilation from the stride), a chain of two convs with biases
// (a compose over a source with a bias), and a RepVGG-like sum of a grouped
// 3x3 and a 1x1, both with biases, and the identity (an accumulate from the fold's input,
// shifted to the centre tap), in 2-D and 3-D.
std::vector<Graph> fold_sources() {
  std::vector<Graph> graphs;
  {
    GraphBuilder b("subtracted", TensorDesc{{2, 4, 9, 9}, DType::float64});
    const int p = b.conv("p", b.input(), conv_attrs(3, {1, 1}, {2, 2}, {0, 0}, 1, false));
    const int depth = b.conv("depth", p, conv_attrs(3, {3, 3}, {1, 1}, {1, 1}, 3, false));
    const int d = b.sub("d", depth, p);
    const int l = b.conv("low_pass", p, conv_attrs(3, {3, 3}, {1, 1}, {1, 1}, 1, false));
    graphs.push_back(b.finish(b.concat("x", {d, l})));
  }
  {
    // A chain: the second conv (unpadded: a padded one would see the bias in its padding)
    // composes over a source register that has a bias.
    GraphBuilder b("chain", TensorDesc{{2, 3, 7, 7}, DType::float64});
    const int a = b.conv("a", b.input(), conv_attrs(4, {1, 1}, {1, 1}, {0, 0}, 1, true));
    graphs.push_back(b.finish(b.conv("b", a, conv_attrs(5, {3, 3}, {1, 1}, {0, 0}, 1, true))));
  }
  for (const std::vector<int64_t>& k3 : {std::vector<int64_t>{3, 3}, std::vector<int64_t>{3, 3, 3}}) {
    const std::vector<int64_t> ones(k3.size(), 1), zeros(k3.size(), 0);
    std::vector<int64_t> shape = {2, 4};
    shape.insert(shape.end(), k3.size(), 5);
    GraphBuilder b(k3.size() == 2 ? "repvgg2d" : "repvgg3d", TensorDesc{shape, DType::float64});
    const int x = b.input();
    const int dense = b.conv("dense", x, conv_attrs(4, k3, ones, ones, 2, true));
    const int point = b.conv("point", x, conv_attrs(4, ones, ones, zeros, 1, true));
    graphs.push_back(b.finish(b.add("sum2", b.add("sum", dense, point), x)));
  }
  return graphs;
}

void fold_case(std::mt19937_64& rng, const std::vector<DType>& dtypes) {
  for (const Graph& source : fold_sources()) {
    const FoldResult folded = fold_graph(source, {.mode = FoldMode::online, .training = true});
    ASSERT_EQ(folded.graph.ops.size(), 1u) << source.name;
    const FoldProgram& p = *folded.graph.ops.at(0).fold;
    const FoldLayout layout(p);
    int64_t weight_count = 1;
    for (int64_t d : p.weight_shape()) weight_count *= d;
    const int64_t bias_count = p.has_bias() ? p.out().out_channels : 0;
    for (DType dtype : dtypes) {
      SCOPED_TRACE(source.name + " " + std::string(to_string(dtype)));
      // Operands in the dtype; the host's fold in double on the same rounded values.
      std::vector<Buffer> operands;
      std::vector<std::vector<double>> host;
      for (const FoldOperand& o : p.operands) {
        host.push_back(rounded(dtype, random_values(o.numel(), rng)));
        operands.emplace_back(dtype, host.back());
      }
      std::vector<const void*> device_ptrs;
      std::vector<const double*> host_ptrs;
      for (size_t i = 0; i < operands.size(); ++i) {
        device_ptrs.push_back(operands[i].data());
        host_ptrs.push_back(host[i].data());
      }
      std::vector<float> registers(static_cast<size_t>(layout.elements)), register_grads(registers.size());
      Buffer weight(dtype, weight_count), bias(dtype, std::max<int64_t>(bias_count, 1));
      weight.poison();
      cuda::fold_program_forward(p, dtype, device_ptrs, registers.data(), weight.data(), bias.data(), nullptr);
      std::vector<double> host_registers(static_cast<size_t>(layout.elements));
      std::vector<double> want_w(static_cast<size_t>(weight_count)), want_b(static_cast<size_t>(bias_count));
      fold_forward<double>(p, host_ptrs, host_registers.data(), want_w.data(), p.has_bias() ? want_b.data() : nullptr);
      EXPECT_TRUE(close(weight.values(), want_w, dtype, 2.0)) << "folded weight";
      if (p.has_bias()) {
        std::vector<double> got_b = bias.values();
        got_b.resize(static_cast<size_t>(bias_count));
        EXPECT_TRUE(close(got_b, want_b, dtype, 2.0)) << "folded bias";
      }
      // The adjoint, from random gradients of the weight and bias.
      const auto gw = rounded(dtype, random_values(weight_count, rng));
      const auto gb = rounded(dtype, random_values(std::max<int64_t>(bias_count, 1), rng));
      Buffer bgw(dtype, gw), bgb(dtype, gb);
      std::vector<Buffer> grads;
      std::vector<std::vector<double>> want_grads;
      for (const FoldOperand& o : p.operands) {
        grads.emplace_back(dtype, o.numel());
        grads.back().poison();
        want_grads.emplace_back(static_cast<size_t>(o.numel()), 0.0);
      }
      std::vector<void*> grad_ptrs;
      std::vector<double*> want_ptrs;
      for (size_t i = 0; i < grads.size(); ++i) {
        grad_ptrs.push_back(grads[i].data());
        want_ptrs.push_back(want_grads[i].data());
      }
      cuda::fold_program_backward(p, dtype, device_ptrs, registers.data(), register_grads.data(), bgw.data(),
                                  bgb.data(), grad_ptrs, nullptr);
      std::vector<double> host_register_grads(host_registers.size());
      fold_run_steps(p, host_ptrs, host_registers.data());
      fold_backward<double>(p, host_ptrs, host_registers.data(), host_register_grads.data(), gw.data(),
                            p.has_bias() ? gb.data() : nullptr, want_ptrs);
      for (size_t i = 0; i < grads.size(); ++i)
        EXPECT_TRUE(close(grads[i].values(), want_grads[i], dtype, 5.0)) << "gradient of " << p.operands[i].name;
    }
  }
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"ChannelSumAndBias", channel_sum_case},
      {"BatchNorm", batch_norm_case},
      {"GroupNorm", group_norm_case},
      {"LayerNorm", layer_norm_case},
      {"DepthwiseConv", depthwise_case},
      {"GlobalPoolAndMul", pool_and_mul_case},
      {"Elementwise", elementwise_case},
      {"AddAny", add_any_case},
      {"Dropout", dropout_case},
      {"Pooling", pooling_case},
      {"Upsample", upsample_case},
      {"Linear", linear_case},
      {"Layout", layout_case},
      {"FoldPrograms", fold_case},
  };
  return all;
}

class KernelsOnTheCpu : public ::testing::TestWithParam<Case> {};

// Each case under two schedules: threads and blocks in index order, then shuffled.
TEST_P(KernelsOnTheCpu, MatchTheFloat64Reference) {
  for (bool shuffle : {false, true}) {
    SCOPED_TRACE(shuffle ? "shuffled schedule" : "index order");
    sim::Device device({.seed = 20261201, .shuffle = shuffle});
    std::mt19937_64 rng(7);
    GetParam().run(rng, {std::begin(kFloatTypes), std::end(kFloatTypes)});
    EXPECT_GT(device.counts().launches, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Sim, KernelsOnTheCpu, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// Every __global__ function of kernels/ runs in some case above, or is listed here with why not.
const std::set<std::string> kNotYetChecked = {};

std::set<std::string> global_functions_of_kernels() {
  std::set<std::string> names;
  const std::regex global(R"(__global__\s+void\s+([A-Za-z_0-9]+)\s*\()");
  // Every .cu file of kernels/, and common.cuh: a new kernel file is read without a list to edit.
  std::vector<std::filesystem::path> files = {std::filesystem::path(CONVBENCH_SOURCE_DIR) / "kernels" / "common.cuh"};
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(CONVBENCH_SOURCE_DIR) / "kernels"))
    if (entry.path().extension() == ".cu") files.push_back(entry.path());
  EXPECT_GT(files.size(), 12u) << "kernels/ read wrong";
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    EXPECT_TRUE(in) << file;
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (auto it = std::sregex_iterator(s.begin(), s.end(), global); it != std::sregex_iterator(); ++it)
      names.insert((*it)[1]);
  }
  return names;
}

TEST(KernelsOnTheCpu, EveryKernelIsChecked) {
  // One schedule and float32 alone: which kernels run does not depend on the dtype.
  sim::Device device;
  for (const Case& c : cases()) {
    std::mt19937_64 rng(11);
    c.run(rng, {DType::float32});
  }
  std::set<std::string> ran;
  for (const auto& [launch_site, count] : device.launches_by_kernel())
    ran.insert(launch_site.substr(0, launch_site.find('<')));
  const std::set<std::string> defined = global_functions_of_kernels();
  EXPECT_GT(defined.size(), 50u) << "kernels/ read wrong";
  std::string unchecked, listed_but_run;
  for (const std::string& k : defined) {
    if (!ran.count(k) && !kNotYetChecked.count(k)) unchecked += " " + k;
    if (ran.count(k) && kNotYetChecked.count(k)) listed_but_run += " " + k;
  }
  EXPECT_EQ(unchecked, "") << "kernels that no case runs: add a case to tests/sim/kernels_sim_test.cpp";
  EXPECT_EQ(listed_but_run, "") << "kernels that run now: take them off kNotYetChecked";
  size_t checked = 0;
  for (const std::string& k : defined) checked += ran.count(k);
  const std::string line = "[          ] " + std::to_string(checked) + " of " + std::to_string(defined.size()) +
                           " kernels run on the CPU emulator against float64 references";
  std::printf("%s\n", line.c_str());
  // kernels/README.md shows this line: it must say what the test counts.
  std::ifstream readme(std::string(CONVBENCH_SOURCE_DIR) + "/kernels/README.md");
  std::stringstream text;
  text << readme.rdbuf();
  EXPECT_NE(text.str().find(line), std::string::npos) << "kernels/README.md does not show: " << line;
}

// ---- the emulator's own checks ----------------------------------------------------------------

// A block sum through shared memory, as block_sum does it: each thread writes its value, then
// a tree of halvings, each step behind a barrier. `barrier` false leaves the barriers out.
template <bool barrier>
__global__ void tree_sum_kernel(const float* x, float* out) {
  __shared__ float s[64];
  s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  if (barrier) __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    if (barrier) __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

template <bool barrier>
std::vector<float> tree_sums(uint64_t seed) {
  sim::Device device({.seed = seed});
  std::vector<float> x(256), out(4, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7);
  CONVBENCH_LAUNCH(4, 64, 0, nullptr, tree_sum_kernel<barrier>)(x.data(), out.data());
  return out;
}

TEST(KernelsSim, AShuffledScheduleExposesAMissingBarrier) {
  std::vector<float> want(4, 0.0f);
  for (int i = 0; i < 256; ++i) want[static_cast<size_t>(i / 64)] += static_cast<float>(i % 7);
  int wrong = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    EXPECT_EQ(tree_sums<true>(seed), want) << "seed " << seed;
    wrong += tree_sums<false>(seed) != want;
  }
  EXPECT_GT(wrong, 0) << "eight schedules of the sum without barriers all gave the right answer";
}

__global__ void early_exit_then_barrier_kernel(float* out) {
  if (threadIdx.x < 16) return;
  __syncthreads();
  out[threadIdx.x] = 1.0f;
}

__global__ void two_barriers_kernel(float* out) {
  if (threadIdx.x % 2)
    __syncthreads();
  else
    __syncthreads();
  out[threadIdx.x] = 1.0f;
}

__global__ void half_warp_shuffle_kernel(float* out) {
  if (threadIdx.x >= 8) return;
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1.0f, 1);
}

__global__ void write_kernel(float* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }

template <class F>
std::string error_of(F&& launch) {
  try {
    launch();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KernelsSim, DivergentBarriersAndShufflesAreErrorsNamingTheKernel) {
  sim::Device device;
  std::vector<float> out(64);
  const std::string exited = error_of([&] {
    CONVBENCH_LAUNCH(1, 64, 0, nullptr, early_exit_then_barrier_kernel)
    (out.data());
  });
  EXPECT_NE(exited.find("early_exit_then_barrier_kernel"), std::string::npos) << exited;
  EXPECT_NE(exited.find("threads 0-15 exited"), std::string::npos) << exited;
  EXPECT_NE(exited.find("kernels_sim_test.cpp:"), std::string::npos) << exited;
  const std::string split = error_of([&] { CONVBENCH_LAUNCH(1, 64, 0, nullptr, two_barriers_kernel)(out.data()); });
  EXPECT_NE(split.find("different __syncthreads"), std::string::npos) << split;
  const std::string shuffle = error_of([&] {
    CONVBENCH_LAUNCH(1, 32, 0, nullptr, half_warp_shuffle_kernel)
    (out.data());
  });
  EXPECT_NE(shuffle.find("half_warp_shuffle_kernel"), std::string::npos) << shuffle;
  EXPECT_NE(shuffle.find("exited"), std::string::npos) << shuffle;
  // The device is usable after an abandoned block.
  CONVBENCH_LAUNCH(2, 32, 0, nullptr, write_kernel)(out.data());
  EXPECT_EQ(out[63], 1.0f);
}

TEST(KernelsSim, LaunchesBeyondTheLimitsAreRefusedWithTheirSite) {
  sim::Device device;
  std::vector<float> out(4096);
  const std::string big = error_of([&] { CONVBENCH_LAUNCH(1, 2048, 0, nullptr, write_kernel)(out.data()); });
  EXPECT_NE(big.find("beyond (1024, 1024, 64)"), std::string::npos) << big;
  EXPECT_NE(big.find("write_kernel"), std::string::npos) << big;
  const std::string empty = error_of([&] { CONVBENCH_LAUNCH(0, 32, 0, nullptr, write_kernel)(out.data()); });
  EXPECT_NE(empty.find("an empty grid"), std::string::npos) << empty;
  const std::string wide = error_of([&] {
    CONVBENCH_LAUNCH(dim3(1, 70000), 32, 0, nullptr, write_kernel)
    (out.data());
  });
  EXPECT_NE(wide.find("65535"), std::string::npos) << wide;
  EXPECT_EQ(device.counts().launches, 0);
}

// A deliberate indexing error in a real kernel's pattern: the reference comparison catches it.
TEST(KernelsSim, AnIndexingErrorFailsTheComparison) {
  sim::Device device;
  std::mt19937_64 rng(3);
  const ActShape s{.n = 2, .c = 3, .s = 37};
  const auto x = rounded(DType::float32, random_values(s.numel(), rng));
  Buffer in(DType::float32, x), out(DType::float32, s.c);
  std::vector<unsigned char> ws(static_cast<size_t>(kernels::channel_sum_workspace_bytes(s)) + 16);
  // channel_sum told the tensor is channels-last when it is not: every sum mixes channels.
  ActShape wrong = s;
  wrong.channels_last = true;
  kernels::channel_sum(DType::float32, wrong, in.data(), out.data(), ws.data(), nullptr);
  std::vector<double> want(static_cast<size_t>(s.c), 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int sp = 0; sp < s.s; ++sp) want[static_cast<size_t>(c)] += x[static_cast<size_t>(at(s, n, c, sp))];
  EXPECT_FALSE(close(out.values(), want, DType::float32, 10.0));
}

}  // namespace
}  // namespace convbench

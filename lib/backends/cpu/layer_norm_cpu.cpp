// Layer norm over the channels at each position, in our own loops written for the compiler to
// vectorise (float32; a bfloat16 call runs on widened copies, widened_calls.hpp). Statistics in
// double: mean first, then the variance of x - mean (two passes, no cancellation), rstd =
// 1/sqrt(var + eps); y = (x - mean) * rstd * gamma + beta. The backward is PyTorch's formula, with
// the parameter gradients summed in double in an order that does not depend on the threads.
//
// oneDNN 2.6's layer_normalization normalises a dense last axis: channels-last only. These loops
// serve both layouts through one view: a channels-first tensor is walked a tile of positions at a
// time with the positions innermost (contiguous), a channels-last one a position at a time with the
// channels innermost.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

constexpr int64_t kTile = 256;   // positions per channels-first tile
constexpr int64_t kChunks = 64;  // channels-last parameter-gradient partials, whatever the threads

struct View {
  int64_t batch, channels, spatial;
  bool channels_last;
  explicit View(const TensorDesc& d)
      : batch(d.batch()),
        channels(d.channels()),
        spatial(d.spatial_size()),
        channels_last(d.layout == Layout::channels_last) {}
  int64_t positions() const { return batch * spatial; }
  int64_t tiles_per_sample() const { return (spatial + kTile - 1) / kTile; }
};

// ---- forward ----

// Channels-first: positions [s0, s0 + len) of sample n, the positions innermost.
void forward_tile(const View& v, const float* x, const float* gamma, const float* beta, float* y, float* mean_out,
                  float* rstd_out, double eps, int64_t n, int64_t s0, int64_t len) {
  double sum[kTile] = {}, sq[kTile] = {};
  float m[kTile], r[kTile];
  const float* xn = x + n * v.channels * v.spatial + s0;
  for (int64_t c = 0; c < v.channels; ++c) {
    const float* row = xn + c * v.spatial;
#pragma omp simd
    for (int64_t s = 0; s < len; ++s) sum[s] += row[s];
  }
  const double inv_c = 1.0 / static_cast<double>(v.channels);
  for (int64_t s = 0; s < len; ++s) sum[s] *= inv_c;  // now the mean
  for (int64_t c = 0; c < v.channels; ++c) {
    const float* row = xn + c * v.spatial;
#pragma omp simd
    for (int64_t s = 0; s < len; ++s) {
      const double d = row[s] - sum[s];
      sq[s] += d * d;
    }
  }
  for (int64_t s = 0; s < len; ++s) {
    m[s] = static_cast<float>(sum[s]);
    r[s] = static_cast<float>(1.0 / std::sqrt(sq[s] * inv_c + eps));
    mean_out[n * v.spatial + s0 + s] = m[s];
    rstd_out[n * v.spatial + s0 + s] = r[s];
  }
  if (y == nullptr) return;  // statistics only
  float* yn = y + n * v.channels * v.spatial + s0;
  for (int64_t c = 0; c < v.channels; ++c) {
    const float* row = xn + c * v.spatial;
    float* out = yn + c * v.spatial;
    const float g = gamma[c], b = beta[c];
#pragma omp simd
    for (int64_t s = 0; s < len; ++s) out[s] = (row[s] - m[s]) * r[s] * g + b;
  }
}

// Channels-last: the C contiguous channels of position p.
void forward_row(const View& v, const float* x, const float* gamma, const float* beta, float* y, float* mean_out,
                 float* rstd_out, double eps, int64_t p) {
  const float* row = x + p * v.channels;
  double sum = 0.0, sq = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < v.channels; ++c) sum += row[c];
  const double mean = sum / static_cast<double>(v.channels);
#pragma omp simd reduction(+ : sq)
  for (int64_t c = 0; c < v.channels; ++c) {
    const double d = row[c] - mean;
    sq += d * d;
  }
  const auto m = static_cast<float>(mean);
  const auto r = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(v.channels) + eps));
  mean_out[p] = m;
  rstd_out[p] = r;
  if (y == nullptr) return;  // statistics only
  float* out = y + p * v.channels;
#pragma omp simd
  for (int64_t c = 0; c < v.channels; ++c) out[c] = (row[c] - m) * r * gamma[c] + beta[c];
}

// ---- backward ----

// grad_x of positions [s0, s0 + len) of sample n (channels-first): with gg = g * gamma and
// xhat = (x - mean) * rstd, dx = rstd * (gg - mean_c(gg) - xhat * mean_c(gg * xhat)).
void grad_input_tile(const View& v, const float* x, const float* g, const float* gamma, const float* mean,
                     const float* rstd, float* dx, int64_t n, int64_t s0, int64_t len) {
  double a[kTile] = {}, b[kTile] = {};
  const int64_t base = n * v.channels * v.spatial + s0;
  const float* m = mean + n * v.spatial + s0;
  const float* r = rstd + n * v.spatial + s0;
  for (int64_t c = 0; c < v.channels; ++c) {
    const float* xr = x + base + c * v.spatial;
    const float* gr = g + base + c * v.spatial;
    const float gm = gamma[c];
#pragma omp simd
    for (int64_t s = 0; s < len; ++s) {
      const float gg = gr[s] * gm;
      a[s] += gg;
      b[s] += gg * ((xr[s] - m[s]) * r[s]);
    }
  }
  const double inv_c = 1.0 / static_cast<double>(v.channels);
  float ma[kTile], mb[kTile];
  for (int64_t s = 0; s < len; ++s) {
    ma[s] = static_cast<float>(a[s] * inv_c);
    mb[s] = static_cast<float>(b[s] * inv_c);
  }
  for (int64_t c = 0; c < v.channels; ++c) {
    const float* xr = x + base + c * v.spatial;
    const float* gr = g + base + c * v.spatial;
    float* out = dx + base + c * v.spatial;
    const float gm = gamma[c];
#pragma omp simd
    for (int64_t s = 0; s < len; ++s) {
      const float xhat = (xr[s] - m[s]) * r[s];
      out[s] = r[s] * (gr[s] * gm - ma[s] - xhat * mb[s]);
    }
  }
}

void grad_input_row(const View& v, const float* x, const float* g, const float* gamma, const float* mean,
                    const float* rstd, float* dx, int64_t p) {
  const float* xr = x + p * v.channels;
  const float* gr = g + p * v.channels;
  const float m = mean[p], r = rstd[p];
  double a = 0.0, b = 0.0;
#pragma omp simd reduction(+ : a, b)
  for (int64_t c = 0; c < v.channels; ++c) {
    const float gg = gr[c] * gamma[c];
    a += gg;
    b += gg * ((xr[c] - m) * r);
  }
  const auto ma = static_cast<float>(a / static_cast<double>(v.channels));
  const auto mb = static_cast<float>(b / static_cast<double>(v.channels));
  float* out = dx + p * v.channels;
#pragma omp simd
  for (int64_t c = 0; c < v.channels; ++c) out[c] = r * (gr[c] * gamma[c] - ma - (xr[c] - m) * r * mb);
}

// grad_gamma = sum over N and space of g * xhat, grad_beta = sum of g, in double.
void param_grads(const View& v, const float* x, const float* g, const float* mean, const float* rstd, float* dgamma,
                 float* dbeta) {
  if (!v.channels_last) {  // one channel per iteration: its plane of each sample, contiguous
#pragma omp parallel for schedule(static) if (v.positions() * v.channels > (1 << 15))
    for (int64_t c = 0; c < v.channels; ++c) {
      double sg = 0.0, sgx = 0.0;
      for (int64_t n = 0; n < v.batch; ++n) {
        const float* xr = x + (n * v.channels + c) * v.spatial;
        const float* gr = g + (n * v.channels + c) * v.spatial;
        const float* m = mean + n * v.spatial;
        const float* r = rstd + n * v.spatial;
#pragma omp simd reduction(+ : sg, sgx)
        for (int64_t s = 0; s < v.spatial; ++s) {
          sg += gr[s];
          sgx += static_cast<double>(gr[s]) * ((xr[s] - m[s]) * r[s]);
        }
      }
      if (dgamma) dgamma[c] = static_cast<float>(sgx);
      if (dbeta) dbeta[c] = static_cast<float>(sg);
    }
    return;
  }
  // Channels-last: kChunks fixed ranges of positions each sum into their own partials, which are
  // then added in chunk order, so the result is the same for any number of threads.
  const int64_t positions = v.positions(), chunks = std::min(kChunks, std::max<int64_t>(positions, 1));
  std::vector<double> partial(static_cast<size_t>(chunks * 2 * v.channels), 0.0);
#pragma omp parallel for schedule(static) if (positions * v.channels > (1 << 15))
  for (int64_t k = 0; k < chunks; ++k) {
    double* sg = partial.data() + k * 2 * v.channels;
    double* sgx = sg + v.channels;
    for (int64_t p = positions * k / chunks; p < positions * (k + 1) / chunks; ++p) {
      const float* xr = x + p * v.channels;
      const float* gr = g + p * v.channels;
      const float m = mean[p], r = rstd[p];
#pragma omp simd
      for (int64_t c = 0; c < v.channels; ++c) {
        sg[c] += gr[c];
        sgx[c] += static_cast<double>(gr[c]) * ((xr[c] - m) * r);
      }
    }
  }
  for (int64_t c = 0; c < v.channels; ++c) {
    double sg = 0.0, sgx = 0.0;
    for (int64_t k = 0; k < chunks; ++k) {
      sg += partial[static_cast<size_t>(k * 2 * v.channels + c)];
      sgx += partial[static_cast<size_t>(k * 2 * v.channels + v.channels + c)];
    }
    if (dgamma) dgamma[c] = static_cast<float>(sgx);
    if (dbeta) dbeta[c] = static_cast<float>(sg);
  }
}

// The statistics into mean and rstd (N * S floats each), and y unless it is null.
void layer_norm_forward(const Tensor& x, const float* gp, const float* bp, float* yp, float* mean, float* rstd,
                        double eps) {
  const View v(x.desc);
  const float* xp = x.data<float>();
  const bool parallel = x.desc.numel() > (1 << 15);
  if (v.channels_last) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t p = 0; p < v.positions(); ++p) forward_row(v, xp, gp, bp, yp, mean, rstd, eps, p);
    return;
  }
  const int64_t tiles = v.tiles_per_sample();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < v.batch * tiles; ++t) {
    const int64_t n = t / tiles, s0 = t % tiles * kTile;
    forward_tile(v, xp, gp, bp, yp, mean, rstd, eps, n, s0, std::min(kTile, v.spatial - s0));
  }
}

void layer_norm_backward(const Tensor& x, const float* mean, const float* rstd, const Tensor& gamma, const Tensor& dy,
                         Tensor* dx, Tensor* dgamma, Tensor* dbeta) {
  const View v(x.desc);
  const float* xp = x.data<float>();
  const float* gp = dy.data<float>();
  const float* gam = gamma.data<float>();
  const bool parallel = x.desc.numel() > (1 << 15);
  if (dx != nullptr) {
    float* dp = dx->data<float>();
    if (v.channels_last) {
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t p = 0; p < v.positions(); ++p) grad_input_row(v, xp, gp, gam, mean, rstd, dp, p);
    } else {
      const int64_t tiles = v.tiles_per_sample();
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t t = 0; t < v.batch * tiles; ++t) {
        const int64_t n = t / tiles, s0 = t % tiles * kTile;
        grad_input_tile(v, xp, gp, gam, mean, rstd, dp, n, s0, std::min(kTile, v.spatial - s0));
      }
    }
  }
  if (dgamma != nullptr || dbeta != nullptr)
    param_grads(v, xp, gp, mean, rstd, dgamma ? dgamma->data<float>() : nullptr,
                dbeta ? dbeta->data<float>() : nullptr);
}

}  // namespace

void register_layer_norm_kernels(KernelTable& table, CpuKernelContext context) {
  std::vector<float>& stats = context.norm_stats;
  // Where no aux tensor holds the statistics (inference; a backward without them), the backend's
  // room: N * S floats each.
  auto room = [&stats](const Tensor& x) {
    const auto count = static_cast<size_t>(x.desc.batch() * x.desc.spatial_size());
    stats.resize(2 * count);
    return std::pair<float*, float*>{stats.data(), stats.data() + count};
  };
  table.add(OpKind::layer_norm,
            {[room](const ForwardCall& call) {
               const Tensor& x = need(at_or_null(call.inputs, 0), call.op, "input");
               auto [mean, rstd] = room(x);
               if (call.aux.size() >= 2 && call.aux[0] != nullptr && call.aux[1] != nullptr) {
                 mean = call.aux[0]->data<float>();
                 rstd = call.aux[1]->data<float>();
               }
               layer_norm_forward(x, call.params.at(0)->data<float>(), call.params.at(1)->data<float>(),
                                  call.output->data<float>(), mean, rstd, call.op.norm.eps);
             },
             [room](const BackwardCall& call) {
               const Op& op = call.op;
               const Tensor& x = need(at_or_null(call.inputs, 0), op, "saved input");
               const float* mean = nullptr;
               const float* rstd = nullptr;
               if (call.aux.size() >= 2 && call.aux[0] != nullptr && call.aux[1] != nullptr) {
                 mean = call.aux[0]->data<float>();
                 rstd = call.aux[1]->data<float>();
               } else {  // no running statistics: the saved input gives the same ones again
                 const auto [m, r] = room(x);
                 layer_norm_forward(x, nullptr, nullptr, nullptr, m, r, op.norm.eps);
                 mean = m;
                 rstd = r;
               }
               layer_norm_backward(x, mean, rstd, *call.params.at(0), need(call.grad_output, op, "grad_output"),
                                   at_or_null(call.grad_inputs, 0), at_or_null(call.grad_params, 0),
                                   at_or_null(call.grad_params, 1));
             }});
}

}  // namespace convbench::cpu

// Group norm in our own loops (oneDNN 2.6 has no group normalization), with double accumulation
// for the statistics, as PyTorch's formula: per (n, group) mean and rstd = 1/sqrt(var + eps)
// over the group's channels and all positions; y = (x - mean) * rstd * gamma + beta.
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

// A tensor seen as (N, C, S): channels_first has channel stride S and position stride 1,
// channels_last channel stride 1 and position stride C.
struct View {
  int64_t batch, channels, spatial, channel_stride, position_stride;
  explicit View(const TensorDesc& d)
      : batch(d.batch()), channels(d.channels()), spatial(d.spatial_size()),
        channel_stride(d.layout == Layout::channels_last ? 1 : d.spatial_size()),
        position_stride(d.layout == Layout::channels_last ? d.channels() : 1) {}
  int64_t index(int64_t n, int64_t c, int64_t s) const {
    return n * channels * spatial + c * channel_stride + s * position_stride;
  }
  // Calls f(c, index) for every element of channels [c0, c1) of sample n, in memory order.
  template <class F>
  void for_each(int64_t n, int64_t c0, int64_t c1, F f) const {
    if (position_stride == 1) {
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t s = 0; s < spatial; ++s) f(c, index(n, c, s));
    } else {
      for (int64_t s = 0; s < spatial; ++s)
        for (int64_t c = c0; c < c1; ++c) f(c, index(n, c, s));
    }
  }
};

struct Stats {
  double mean, rstd;
};

Stats group_stats(const View& v, const float* x, int64_t n, int64_t c0, int64_t c1, double eps) {
  const double count = static_cast<double>((c1 - c0) * v.spatial);
  double sum = 0.0;
  v.for_each(n, c0, c1, [&](int64_t, int64_t i) { sum += x[i]; });
  const double mean = sum / count;
  double sq = 0.0;
  v.for_each(n, c0, c1, [&](int64_t, int64_t i) {
    const double d = x[i] - mean;
    sq += d * d;
  });
  return {mean, 1.0 / std::sqrt(sq / count + eps)};
}

}  // namespace

void group_norm_stats(const Tensor& x, int64_t groups, double eps, float* mean, float* rstd) {
  const View v(x.desc);
  const int64_t per_group = v.channels / groups;
  const float* xp = x.data<float>();
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t ng = 0; ng < v.batch * groups; ++ng) {
    const int64_t n = ng / groups, c0 = (ng % groups) * per_group;
    const Stats st = group_stats(v, xp, n, c0, c0 + per_group, eps);
    mean[ng] = static_cast<float>(st.mean);
    rstd[ng] = static_cast<float>(st.rstd);
  }
}

void group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                        float* mean, float* rstd, int64_t groups, double eps) {
  const View v(x.desc);
  const int64_t per_group = v.channels / groups;
  const float* xp = x.data<float>();
  const float* gp = gamma.data<float>();
  const float* bp = beta.data<float>();
  float* yp = y.data<float>();
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t ng = 0; ng < v.batch * groups; ++ng) {
    const int64_t n = ng / groups, c0 = (ng % groups) * per_group;
    const Stats st = group_stats(v, xp, n, c0, c0 + per_group, eps);
    mean[ng] = static_cast<float>(st.mean);
    rstd[ng] = static_cast<float>(st.rstd);
    const auto m = static_cast<float>(st.mean), r = static_cast<float>(st.rstd);
    v.for_each(n, c0, c0 + per_group, [&](int64_t c, int64_t i) { yp[i] = (xp[i] - m) * r * gp[c] + bp[c]; });
  }
}

void group_norm_backward(const Tensor& x, const float* mean, const float* rstd,
                         const Tensor& gamma, const Tensor& dy, Tensor* dx, Tensor& dgamma,
                         Tensor& dbeta, int64_t groups) {
  const View v(x.desc);
  const int64_t per_group = v.channels / groups;
  const float* xp = x.data<float>();
  const float* mp = mean;
  const float* rp = rstd;
  const float* gam = gamma.data<float>();
  const float* gp = dy.data<float>();
  if (dx) {
    float* dp = dx->data<float>();
    const double count = static_cast<double>(per_group * v.spatial);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t ng = 0; ng < v.batch * groups; ++ng) {
      const int64_t n = ng / groups, c0 = (ng % groups) * per_group, c1 = c0 + per_group;
      const double m = mp[ng], r = rp[ng];
      double sum_gg = 0.0, sum_gg_xhat = 0.0;
      v.for_each(n, c0, c1, [&](int64_t c, int64_t i) {
        const double gg = static_cast<double>(gp[i]) * gam[c];
        sum_gg += gg;
        sum_gg_xhat += gg * (xp[i] - m) * r;
      });
      const auto a = static_cast<float>(sum_gg / count), b = static_cast<float>(sum_gg_xhat / count);
      const auto mf = static_cast<float>(m), rf = static_cast<float>(r);
      v.for_each(n, c0, c1, [&](int64_t c, int64_t i) {
        const float xhat = (xp[i] - mf) * rf;
        dp[i] = rf * (gp[i] * gam[c] - a - xhat * b);
      });
    }
  }
  float* dg = dgamma.data<float>();
  float* db = dbeta.data<float>();
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < v.channels; ++c) {
    double sum_g = 0.0, sum_g_xhat = 0.0;
    for (int64_t n = 0; n < v.batch; ++n) {
      const int64_t ng = n * groups + c / per_group;
      const float m = mp[ng], r = rp[ng];
      for (int64_t s = 0; s < v.spatial; ++s) {
        const int64_t i = v.index(n, c, s);
        sum_g += gp[i];
        sum_g_xhat += static_cast<double>(gp[i]) * ((xp[i] - m) * r);
      }
    }
    dg[c] = static_cast<float>(sum_g_xhat);
    db[c] = static_cast<float>(sum_g);
  }
}

}  // namespace convbench::cpu

// Group norm in our own loops (oneDNN 2.6 has no group normalization), on channel_sums /
// channel_affine: per (n, group) mean and rstd = 1/sqrt(var + eps) over the group's channels and
// all positions (two passes, double accumulation); y = (x - mean) * rstd * gamma + beta; the
// backward is PyTorch's formula.
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

struct Shape {
  int64_t batch, channels, groups, per_group;
  double count;  // elements per (n, group)
  Shape(const TensorDesc& d, int64_t g)
      : batch(d.batch()), channels(d.channels()), groups(g), per_group(d.channels() / g),
        count(static_cast<double>(d.channels() / g * d.spatial_size())) {}
  size_t planes() const { return static_cast<size_t>(batch * channels); }
  // The (n, group) index of plane (n, c).
  int64_t group_of(int64_t plane) const { return (plane / channels) * groups + (plane % channels) / per_group; }
};

// Per (n, group) sums of per (n, c) sums.
std::vector<double> over_groups(const Shape& s, const std::vector<double>& per_plane) {
  std::vector<double> out(static_cast<size_t>(s.batch * s.groups), 0.0);
  for (int64_t p = 0; p < static_cast<int64_t>(per_plane.size()); ++p)
    out[static_cast<size_t>(s.group_of(p))] += per_plane[static_cast<size_t>(p)];
  return out;
}

// Per (n, group) values repeated for each channel of the group.
std::vector<float> per_plane(const Shape& s, const float* per_group) {
  std::vector<float> out(s.planes());
  for (size_t p = 0; p < out.size(); ++p) out[p] = per_group[s.group_of(static_cast<int64_t>(p))];
  return out;
}

}  // namespace

void group_norm_stats(const Tensor& x, int64_t groups, double eps, float* mean, float* rstd) {
  const Shape s(x.desc, groups);
  const float* xp = x.data<float>();
  std::vector<double> s1(s.planes()), s2(s.planes());
  const std::vector<float> zeros(s.planes(), 0.f);
  channel_sums(x.desc, xp, zeros.data(), nullptr, nullptr, s1.data(), nullptr);
  const std::vector<double> sums = over_groups(s, s1);
  for (size_t g = 0; g < sums.size(); ++g) mean[g] = static_cast<float>(sums[g] / s.count);
  const std::vector<float> shift = per_plane(s, mean);
  channel_sums(x.desc, xp, shift.data(), xp, shift.data(), s1.data(), s2.data());
  const std::vector<double> squares = over_groups(s, s2);
  for (size_t g = 0; g < squares.size(); ++g) rstd[g] = static_cast<float>(1.0 / std::sqrt(squares[g] / s.count + eps));
}

void group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                        float* mean, float* rstd, int64_t groups, double eps) {
  group_norm_stats(x, groups, eps, mean, rstd);
  const Shape s(x.desc, groups);
  const float* gp = gamma.data<float>();
  const float* bp = beta.data<float>();
  std::vector<float> scale(s.planes()), bias(s.planes());
  for (size_t p = 0; p < s.planes(); ++p) {
    const auto c = static_cast<size_t>(static_cast<int64_t>(p) % s.channels);
    scale[p] = rstd[s.group_of(static_cast<int64_t>(p))] * gp[c];
    bias[p] = bp[c];
  }
  channel_affine(x.desc, nullptr, nullptr, x.data<float>(), per_plane(s, mean).data(), scale.data(), bias.data(),
                 y.data<float>());
}

void group_norm_backward(const Tensor& x, const float* mean, const float* rstd,
                         const Tensor& gamma, const Tensor& dy, Tensor* dx, Tensor& dgamma,
                         Tensor& dbeta, int64_t groups) {
  const Shape s(x.desc, groups);
  const float* gam = gamma.data<float>();
  // per (n, c): sum(dy) and sum(dy * (x - mean))
  const std::vector<float> zeros(s.planes(), 0.f), shift = per_plane(s, mean);
  std::vector<double> sum_dy(s.planes()), sum_dy_xmu(s.planes());
  channel_sums(x.desc, dy.data<float>(), zeros.data(), x.data<float>(), shift.data(), sum_dy.data(), sum_dy_xmu.data());
  float* dg = dgamma.data<float>();
  float* db = dbeta.data<float>();
  for (int64_t c = 0; c < s.channels; ++c) {
    double g = 0.0, b = 0.0;
    for (int64_t n = 0; n < s.batch; ++n) {
      const int64_t p = n * s.channels + c;
      g += sum_dy_xmu[static_cast<size_t>(p)] * rstd[s.group_of(p)];
      b += sum_dy[static_cast<size_t>(p)];
    }
    dg[c] = static_cast<float>(g);
    db[c] = static_cast<float>(b);
  }
  if (dx == nullptr) return;
  // With gg = dy * gamma, xhat = (x - mean) * rstd, per (n, group):
  //   dx = rstd * (gg - sum(gg) / count - xhat * sum(gg * xhat) / count)
  //      = (rstd * gamma) * dy - rstd^2 * sum(gg * xhat) / count * (x - mean) - rstd * sum(gg) / count
  std::vector<double> sum_gg(static_cast<size_t>(s.batch * s.groups), 0.0), sum_gg_xhat(sum_gg.size(), 0.0);
  for (int64_t p = 0; p < static_cast<int64_t>(s.planes()); ++p) {
    const auto g = static_cast<size_t>(s.group_of(p));
    const double gm = gam[p % s.channels];
    sum_gg[g] += gm * sum_dy[static_cast<size_t>(p)];
    sum_gg_xhat[g] += gm * rstd[g] * sum_dy_xmu[static_cast<size_t>(p)];
  }
  std::vector<float> a(s.planes()), minus_b(s.planes()), offset(s.planes());
  for (int64_t p = 0; p < static_cast<int64_t>(s.planes()); ++p) {
    const auto g = static_cast<size_t>(s.group_of(p));
    const double r = rstd[g];
    a[static_cast<size_t>(p)] = static_cast<float>(r * gam[p % s.channels]);
    minus_b[static_cast<size_t>(p)] = static_cast<float>(-r * r * sum_gg_xhat[g] / s.count);
    offset[static_cast<size_t>(p)] = static_cast<float>(-r * sum_gg[g] / s.count);
  }
  channel_affine(x.desc, dy.data<float>(), a.data(), x.data<float>(), shift.data(), minus_b.data(), offset.data(),
                 dx->data<float>());
}

}  // namespace convbench::cpu

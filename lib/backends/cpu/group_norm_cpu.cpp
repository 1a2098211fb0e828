// Group norm in our own loops (oneDNN 2.6 has no group normalization), on channel_sums /
// channel_affine: per (n, group) mean and rstd = 1/sqrt(var + eps) over the group's channels and
// all positions (one shifted pass, double accumulation); y = (x - mean) * rstd * gamma + beta; the
// backward is PyTorch's formula.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

struct Shape {
  int64_t batch, channels, groups, per_group;
  double count;  // elements per (n, group)
  Shape(const TensorDesc& d, int64_t g)
      : batch(d.batch()),
        channels(d.channels()),
        groups(g),
        per_group(d.channels() / g),
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

// A value of each (n, group), its first element: x - k is exact in float for values within a
// factor of two of k (Sterbenz), so sums and affine passes over x - k lose nothing to the
// cancellation that x - mean in float suffers when |mean| is large against the spread.
std::vector<float> group_shifts(const Tensor& x, const Shape& s) {
  const float* xp = x.data<float>();
  const std::vector<int64_t> strides = x.desc.strides();
  std::vector<float> k(static_cast<size_t>(s.batch * s.groups));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.groups; ++g)
      k[static_cast<size_t>(n * s.groups + g)] = xp[n * strides[0] + g * s.per_group * strides[1]];
  return k;
}

struct GroupStats {
  std::vector<float> shift;  // k per (n, group)
  std::vector<double> mean, rstd;
};

// One pass over x for both sums (PyTorch also reads x once for its statistics), in double.
GroupStats group_stats(const Tensor& x, const Shape& s, double eps) {
  GroupStats st{group_shifts(x, s), {}, {}};
  const float* xp = x.data<float>();
  const std::vector<float> shift = per_plane(s, st.shift.data());
  std::vector<double> s1(s.planes()), s2(s.planes());
  channel_sums(x.desc, xp, shift.data(), xp, shift.data(), s1.data(), s2.data());
  const std::vector<double> sums = over_groups(s, s1), squares = over_groups(s, s2);
  for (size_t g = 0; g < sums.size(); ++g) {
    const double m = sums[g] / s.count;  // mean of x - k
    st.mean.push_back(st.shift[g] + m);
    st.rstd.push_back(1.0 / std::sqrt(std::max(0.0, squares[g] / s.count - m * m) + eps));
  }
  return st;
}

// group_stats, with mean and rstd also stored as the floats the aux tensors keep.
GroupStats group_stats(const Tensor& x, const Shape& s, double eps, float* mean, float* rstd) {
  GroupStats st = group_stats(x, s, eps);
  for (size_t g = 0; g < st.mean.size(); ++g) {
    mean[g] = static_cast<float>(st.mean[g]);
    rstd[g] = static_cast<float>(st.rstd[g]);
  }
  return st;
}

}  // namespace

void group_norm_stats(const Tensor& x, int64_t groups, double eps, float* mean, float* rstd) {
  group_stats(x, Shape(x.desc, groups), eps, mean, rstd);
}

void group_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y, float* mean, float* rstd,
                        int64_t groups, double eps) {
  const Shape s(x.desc, groups);
  const GroupStats st = group_stats(x, s, eps, mean, rstd);
  // y = scale * (x - k) + (beta + scale * (k - mean)), the second term in double.
  const float* gp = gamma.data<float>();
  const float* bp = beta.data<float>();
  std::vector<float> scale(s.planes()), bias(s.planes());
  for (size_t p = 0; p < s.planes(); ++p) {
    const auto c = static_cast<size_t>(static_cast<int64_t>(p) % s.channels);
    const auto g = static_cast<size_t>(s.group_of(static_cast<int64_t>(p)));
    const double sc = st.rstd[g] * gp[c];
    scale[p] = static_cast<float>(sc);
    bias[p] = static_cast<float>(bp[c] + sc * (st.shift[g] - st.mean[g]));
  }
  channel_affine(x.desc, nullptr, nullptr, x.data<float>(), per_plane(s, st.shift.data()).data(), scale.data(),
                 bias.data(), y.data<float>());
}

void group_norm_backward(const Tensor& x, const float* mean, const float* rstd, const Tensor& gamma, const Tensor& dy,
                         Tensor* dx, Tensor& dgamma, Tensor& dbeta, int64_t groups) {
  const Shape s(x.desc, groups);
  const float* gam = gamma.data<float>();
  // per (n, c): sum(dy) and sum(dy * (x - mean)) = sum(dy * (x - k)) + (k - mean) * sum(dy)
  const std::vector<float> k = group_shifts(x, s);
  const std::vector<float> zeros(s.planes(), 0.f), shift = per_plane(s, k.data());
  std::vector<double> sum_dy(s.planes()), sum_dy_xmu(s.planes());
  channel_sums(x.desc, dy.data<float>(), zeros.data(), x.data<float>(), shift.data(), sum_dy.data(), sum_dy_xmu.data());
  for (int64_t p = 0; p < static_cast<int64_t>(s.planes()); ++p) {
    const auto g = static_cast<size_t>(s.group_of(p));
    sum_dy_xmu[static_cast<size_t>(p)] += (static_cast<double>(k[g]) - mean[g]) * sum_dy[static_cast<size_t>(p)];
  }
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
  // ... + minus_b * (x - mean) + offset = ... + minus_b * (x - k) + (offset + minus_b * (k - mean))
  std::vector<float> a(s.planes()), minus_b(s.planes()), offset(s.planes());
  for (int64_t p = 0; p < static_cast<int64_t>(s.planes()); ++p) {
    const auto g = static_cast<size_t>(s.group_of(p));
    const double r = rstd[g];
    const double mb = -r * r * sum_gg_xhat[g] / s.count;
    a[static_cast<size_t>(p)] = static_cast<float>(r * gam[p % s.channels]);
    minus_b[static_cast<size_t>(p)] = static_cast<float>(mb);
    offset[static_cast<size_t>(p)] =
        static_cast<float>(-r * sum_gg[g] / s.count + mb * (static_cast<double>(k[g]) - mean[g]));
  }
  channel_affine(x.desc, dy.data<float>(), a.data(), x.data<float>(), shift.data(), minus_b.data(), offset.data(),
                 dx->data<float>());
}

void register_group_norm_kernels(KernelTable& table, CpuKernelContext context) {
  std::vector<float>& stats = context.norm_stats;
  table.add(OpKind::group_norm,
            {[&stats](const ForwardCall& call) {
               const Op& op = call.op;
               const Tensor& x = need(at_or_null(call.inputs, 0), op, "input");
               const size_t count = static_cast<size_t>(x.desc.batch() * op.norm.groups);
               float* mean = nullptr;
               float* rstd = nullptr;
               if (call.aux.size() >= 2) {
                 mean = call.aux[0]->data<float>();
                 rstd = call.aux[1]->data<float>();
               } else {  // inference keeps no statistics; N * groups floats are ours to hold
                 stats.resize(2 * count);
                 mean = stats.data();
                 rstd = stats.data() + count;
               }
               group_norm_forward(x, *call.params.at(0), *call.params.at(1), *call.output, mean, rstd, op.norm.groups,
                                  op.norm.eps);
             },
             [&stats](const BackwardCall& call) {
               const Op& op = call.op;
               const Tensor& x = need(at_or_null(call.inputs, 0), op, "saved input");
               const float* mean = nullptr;
               const float* rstd = nullptr;
               if (call.aux.size() >= 2) {
                 mean = call.aux[0]->data<float>();
                 rstd = call.aux[1]->data<float>();
               } else {  // GN has no running statistics: the saved input gives the same ones again
                 const size_t count = static_cast<size_t>(x.desc.batch() * op.norm.groups);
                 stats.resize(2 * count);
                 group_norm_stats(x, op.norm.groups, op.norm.eps, stats.data(), stats.data() + count);
                 mean = stats.data();
                 rstd = stats.data() + count;
               }
               group_norm_backward(x, mean, rstd, *call.params.at(0), need(call.grad_output, op, "grad_output"),
                                   at_or_null(call.grad_inputs, 0), *call.grad_params.at(0), *call.grad_params.at(1),
                                   op.norm.groups);
             }});
}

}  // namespace convbench::cpu

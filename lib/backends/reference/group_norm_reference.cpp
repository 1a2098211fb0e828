// Group norm, forward and backward, as PyTorch computes it: biased variance, statistics saved as
// (mean, 1/std) per (sample, group).
#include <cmath>

#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {

namespace {

// Per (n, group) mean and 1/std over the group's channels and all spatial positions.
struct GroupStats {
  std::vector<double> mean, rstd;  // index n * groups + group
};

GroupStats group_stats(const std::vector<double>& x, const NCS& v, int64_t groups, double eps) {
  const int64_t per_group = v.channels / groups;
  const double count = static_cast<double>(per_group * v.spatial);
  GroupStats st{std::vector<double>(static_cast<size_t>(v.batch * groups)),
                std::vector<double>(static_cast<size_t>(v.batch * groups))};
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t grp = 0; grp < groups; ++grp) {
      double sum = 0.0;
      for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c)
        for (int64_t s = 0; s < v.spatial; ++s) sum += x[v.index(n, c, s)];
      const double m = sum / count;
      double sq = 0.0;
      for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c)
        for (int64_t s = 0; s < v.spatial; ++s) sq += (x[v.index(n, c, s)] - m) * (x[v.index(n, c, s)] - m);
      st.mean[n * groups + grp] = m;
      st.rstd[n * groups + grp] = 1.0 / std::sqrt(sq / count + eps);
    }
  return st;
}

}  // namespace

void group_norm_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "group_norm", "input");
  const NCS v(xt.desc);
  const int64_t groups = call.op.norm.groups, per_group = v.channels / groups;
  const std::vector<double> x = load(xt);
  const std::vector<double> gamma = load(required(optional_at(call.params, 0), "group_norm", "weight"));
  const std::vector<double> beta = load(required(optional_at(call.params, 1), "group_norm", "bias"));
  const GroupStats st = group_stats(x, v, groups, call.op.norm.eps);

  std::vector<double> y(x.size());
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c) {
      const int64_t ng = n * groups + c / per_group;
      for (int64_t s = 0; s < v.spatial; ++s) {
        const int64_t i = v.index(n, c, s);
        y[i] = (x[i] - st.mean[ng]) * st.rstd[ng] * gamma[c] + beta[c];
      }
    }
  store(required(call.output, "group_norm", "output"), y);
  // Training saves the statistics for backward; inference has no aux tensors to fill.
  if (Tensor* saved_mean = optional_at(call.aux, 0)) store(*saved_mean, st.mean);
  if (Tensor* saved_rstd = optional_at(call.aux, 1)) store(*saved_rstd, st.rstd);
}

void group_norm_backward(const BackwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "group_norm", "saved input");
  const NCS v(xt.desc);
  const int64_t groups = call.op.norm.groups, per_group = v.channels / groups;
  const double count = static_cast<double>(per_group * v.spatial);
  const std::vector<double> x = load(xt);
  const std::vector<double> g = load(required(call.grad_output, "group_norm", "grad_output"));
  const std::vector<double> gamma = load(required(optional_at(call.params, 0), "group_norm", "weight"));
  // The forward's saved statistics when given; GN has no running statistics, so recomputing them
  // from the saved input gives the same values.
  GroupStats st;
  if (call.aux.size() >= 2 && call.aux[0] != nullptr && call.aux[1] != nullptr) {
    st.mean = load(*call.aux[0]);
    st.rstd = load(*call.aux[1]);
  } else {
    st = group_stats(x, v, groups, call.op.norm.eps);
  }
  auto xhat = [&](int64_t n, int64_t c, int64_t s) {
    const int64_t ng = n * groups + c / per_group;
    return (x[v.index(n, c, s)] - st.mean[ng]) * st.rstd[ng];
  };

  if (Tensor* grad_x = optional_at(call.grad_inputs, 0)) {
    std::vector<double> gx(x.size());
    for (int64_t n = 0; n < v.batch; ++n)
      for (int64_t grp = 0; grp < groups; ++grp) {
        const double rstd = st.rstd[n * groups + grp];
        double sum_gg = 0.0, sum_gg_xhat = 0.0;
        for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c)
          for (int64_t s = 0; s < v.spatial; ++s) {
            const double gg = g[v.index(n, c, s)] * gamma[c];
            sum_gg += gg;
            sum_gg_xhat += gg * xhat(n, c, s);
          }
        for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c)
          for (int64_t s = 0; s < v.spatial; ++s) {
            const int64_t i = v.index(n, c, s);
            gx[i] = norm_input_grad(g[i] * gamma[c], xhat(n, c, s), rstd, sum_gg, sum_gg_xhat, count);
          }
      }
    store(*grad_x, gx);
  }

  store_affine_grads(call, g, v, xhat);
}

void register_group_norm_kernels(KernelTable& table) {
  table.add(OpKind::group_norm, {group_norm_forward, group_norm_backward});
}

}  // namespace convbench::reference

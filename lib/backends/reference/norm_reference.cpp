// Batch norm and group norm, forward and backward, as PyTorch computes them: biased variance for
// normalising, the unbiased one for BN's running variance, statistics saved as (mean, 1/std).
#include <cmath>

#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

// Logical (N, C, S) view of an activation, S the flattened spatial size.
struct NCS {
  int64_t batch, channels, spatial;
  explicit NCS(const TensorDesc& d) : batch(d.batch()), channels(d.channels()), spatial(d.spatial_size()) {}
  int64_t index(int64_t n, int64_t c, int64_t s) const { return (n * channels + c) * spatial + s; }
};

// Backward of y = xhat * gamma + beta with xhat = (x - mean) * invstd and mean/invstd taken over
// a set of M elements: with gg = grad_y * gamma,
//   grad_x = invstd * (gg - mean(gg) - xhat * mean(gg * xhat)),
// PyTorch's batch- and group-norm formula written with xhat. The caller passes the sums.
inline double norm_input_grad(double gg, double xhat, double invstd, double sum_gg, double sum_gg_xhat, double count) {
  return invstd * (gg - sum_gg / count - xhat * sum_gg_xhat / count);
}

}  // namespace

namespace {

// Batch norm's forward in double, statistics and running statistics stored; returns the output
// before it is stored, so that batch_norm_act rounds it once, after its activation.
std::vector<double> batch_norm_values(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "batch_norm", "input");
  const NCS v(xt.desc);
  const double count = static_cast<double>(v.batch * v.spatial);
  const double eps = call.op.norm.eps, momentum = call.op.norm.momentum;
  const std::vector<double> x = load(xt);
  const std::vector<double> gamma = load(required(optional_at(call.params, 0), "batch_norm", "weight"));
  const std::vector<double> beta = load(required(optional_at(call.params, 1), "batch_norm", "bias"));
  Tensor& running_mean = required(optional_at(call.buffers, 0), "batch_norm", "running_mean");
  Tensor& running_var = required(optional_at(call.buffers, 1), "batch_norm", "running_var");
  std::vector<double> rm = load(running_mean), rv = load(running_var);

  std::vector<double> mean(static_cast<size_t>(v.channels)), invstd(mean.size());
  if (call.training) {
    if (count < 2)
      throw std::invalid_argument("reference backend: batch_norm: training needs more than one value per channel");
    for (int64_t c = 0; c < v.channels; ++c) {
      double sum = 0.0;
      for (int64_t n = 0; n < v.batch; ++n)
        for (int64_t s = 0; s < v.spatial; ++s) sum += x[v.index(n, c, s)];
      const double m = sum / count;
      double sq = 0.0;
      for (int64_t n = 0; n < v.batch; ++n)
        for (int64_t s = 0; s < v.spatial; ++s) sq += (x[v.index(n, c, s)] - m) * (x[v.index(n, c, s)] - m);
      const double var = sq / count;  // biased: what the batch is normalised with
      mean[c] = m;
      invstd[c] = 1.0 / std::sqrt(var + eps);
      rm[c] = (1.0 - momentum) * rm[c] + momentum * m;
      rv[c] = (1.0 - momentum) * rv[c] + momentum * sq / (count - 1.0);  // unbiased, as PyTorch
    }
    store(running_mean, rm);
    store(running_var, rv);
    if (Tensor* saved_mean = optional_at(call.aux, 0)) store(*saved_mean, mean);
    if (Tensor* saved_invstd = optional_at(call.aux, 1)) store(*saved_invstd, invstd);
  } else {
    for (int64_t c = 0; c < v.channels; ++c) {
      mean[c] = rm[c];
      invstd[c] = 1.0 / std::sqrt(rv[c] + eps);
    }
  }

  std::vector<double> y(x.size());
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t s = 0; s < v.spatial; ++s) {
        const int64_t i = v.index(n, c, s);
        y[i] = (x[i] - mean[c]) * invstd[c] * gamma[c] + beta[c];
      }
  return y;
}

}  // namespace

void batch_norm_forward(const ForwardCall& call) {
  store(required(call.output, "batch_norm", "output"), batch_norm_values(call));
}

// Training backward (the statistics depend on x); the saved mean and invstd are the forward's.
void batch_norm_backward(const BackwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "batch_norm", "saved input");
  const NCS v(xt.desc);
  const double count = static_cast<double>(v.batch * v.spatial);
  const std::vector<double> x = load(xt);
  const std::vector<double> g = load(required(call.grad_output, "batch_norm", "grad_output"));
  const std::vector<double> mean = load(required(optional_at(call.aux, 0), "batch_norm", "saved mean"));
  const std::vector<double> invstd = load(required(optional_at(call.aux, 1), "batch_norm", "saved invstd"));
  const std::vector<double> gamma = load(required(optional_at(call.params, 0), "batch_norm", "weight"));

  std::vector<double> sum_g(static_cast<size_t>(v.channels), 0.0), sum_g_xhat(sum_g.size(), 0.0);
  for (int64_t c = 0; c < v.channels; ++c)
    for (int64_t n = 0; n < v.batch; ++n)
      for (int64_t s = 0; s < v.spatial; ++s) {
        const int64_t i = v.index(n, c, s);
        sum_g[c] += g[i];
        sum_g_xhat[c] += g[i] * (x[i] - mean[c]) * invstd[c];
      }

  if (Tensor* grad_x = optional_at(call.grad_inputs, 0)) {
    std::vector<double> gx(x.size());
    for (int64_t n = 0; n < v.batch; ++n)
      for (int64_t c = 0; c < v.channels; ++c)
        for (int64_t s = 0; s < v.spatial; ++s) {
          const int64_t i = v.index(n, c, s);
          const double xhat = (x[i] - mean[c]) * invstd[c];
          gx[i] =
              norm_input_grad(g[i] * gamma[c], xhat, invstd[c], sum_g[c] * gamma[c], sum_g_xhat[c] * gamma[c], count);
        }
    store(*grad_x, gx);
  }
  if (Tensor* grad_gamma = optional_at(call.grad_params, 0)) store(*grad_gamma, sum_g_xhat);
  if (Tensor* grad_beta = optional_at(call.grad_params, 1)) store(*grad_beta, sum_g);
}

// batch_norm_act (Inplace-ABN): batch norm's forward, then leaky ReLU. The output may be the
// input's tensor (memory policy inplace_abn): the input is read whole before the output is written.
void batch_norm_act_forward(const ForwardCall& call) {
  std::vector<double> y = batch_norm_values(call);
  const double slope = call.op.negative_slope;
  for (double& v : y) v = v > 0.0 ? v : v * slope;
  store(required(call.output, "batch_norm_act", "output"), y);
}

// From the saved output y alone: z = y where y > 0, y / slope elsewhere (the activation undone),
// xhat = (z - beta) / gamma (the affine undone), dz = g where y > 0, g * slope elsewhere; then
// batch norm's backward with xhat and dz.
void batch_norm_act_backward(const BackwardCall& call) {
  const Tensor& yt = required(call.output, "batch_norm_act", "saved output");
  const NCS v(yt.desc);
  const double count = static_cast<double>(v.batch * v.spatial);
  const double slope = call.op.negative_slope;
  const std::vector<double> y = load(yt);
  const std::vector<double> g = load(required(call.grad_output, "batch_norm_act", "grad_output"));
  const std::vector<double> invstd = load(required(optional_at(call.aux, 1), "batch_norm_act", "saved invstd"));
  const std::vector<double> gamma = load(required(optional_at(call.params, 0), "batch_norm_act", "weight"));
  const std::vector<double> beta = load(required(optional_at(call.params, 1), "batch_norm_act", "bias"));

  std::vector<double> xhat(y.size()), dz(y.size());
  std::vector<double> sum_dz(static_cast<size_t>(v.channels), 0.0), sum_dz_xhat(sum_dz.size(), 0.0);
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t s = 0; s < v.spatial; ++s) {
        const int64_t i = v.index(n, c, s);
        const bool positive = y[i] > 0.0;
        const double z = positive ? y[i] : y[i] / slope;
        xhat[i] = (z - beta[c]) / gamma[c];
        dz[i] = positive ? g[i] : g[i] * slope;
        sum_dz[c] += dz[i];
        sum_dz_xhat[c] += dz[i] * xhat[i];
      }
  if (Tensor* grad_x = optional_at(call.grad_inputs, 0)) {
    std::vector<double> gx(y.size());
    for (int64_t n = 0; n < v.batch; ++n)
      for (int64_t c = 0; c < v.channels; ++c)
        for (int64_t s = 0; s < v.spatial; ++s) {
          const int64_t i = v.index(n, c, s);
          gx[i] = norm_input_grad(dz[i] * gamma[c], xhat[i], invstd[c], sum_dz[c] * gamma[c], sum_dz_xhat[c] * gamma[c],
                                  count);
        }
    store(*grad_x, gx);
  }
  if (Tensor* grad_gamma = optional_at(call.grad_params, 0)) store(*grad_gamma, sum_dz_xhat);
  if (Tensor* grad_beta = optional_at(call.grad_params, 1)) store(*grad_beta, sum_dz);
}

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

  std::vector<double> sum_g(static_cast<size_t>(v.channels), 0.0), sum_g_xhat(sum_g.size(), 0.0);
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t s = 0; s < v.spatial; ++s) {
        sum_g[c] += g[v.index(n, c, s)];
        sum_g_xhat[c] += g[v.index(n, c, s)] * xhat(n, c, s);
      }
  if (Tensor* grad_gamma = optional_at(call.grad_params, 0)) store(*grad_gamma, sum_g_xhat);
  if (Tensor* grad_beta = optional_at(call.grad_params, 1)) store(*grad_beta, sum_g);
}

void register_norm_kernels(KernelTable& table) {
  table.add(OpKind::batch_norm, {batch_norm_forward, batch_norm_backward});
  table.add(OpKind::batch_norm_act, {batch_norm_act_forward, batch_norm_act_backward});
  table.add(OpKind::group_norm, {group_norm_forward, group_norm_backward});
}

}  // namespace convbench::reference

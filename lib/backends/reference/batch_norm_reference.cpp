// Batch norm and batch_norm_act (Inplace-ABN), forward and backward, as PyTorch computes them:
// biased variance for normalising, the unbiased one for the running variance, statistics saved as
// (mean, 1/std).
#include <cmath>

#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {

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

void register_batch_norm_kernels(KernelTable& table) {
  table.add(OpKind::batch_norm, {batch_norm_forward, batch_norm_backward});
  table.add(OpKind::batch_norm_act, {batch_norm_act_forward, batch_norm_act_backward});
}

}  // namespace convbench::reference

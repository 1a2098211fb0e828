// Layer norm over the channels at each position, forward and backward, as PyTorch's
// native_layer_norm computes it on a channels-last view: biased variance, statistics saved as
// (mean, 1/std) per (sample, position).
#include <cmath>

#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {

namespace {

// Per (n, position) mean and 1/std over the channels; index n * spatial + s.
struct PositionStats {
  std::vector<double> mean, rstd;
};

PositionStats position_stats(const std::vector<double>& x, const NCS& v, double eps) {
  const auto positions = static_cast<size_t>(v.batch * v.spatial);
  PositionStats st{std::vector<double>(positions), std::vector<double>(positions)};
  const auto c_count = static_cast<double>(v.channels);
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t s = 0; s < v.spatial; ++s) {
      double sum = 0.0;
      for (int64_t c = 0; c < v.channels; ++c) sum += x[v.index(n, c, s)];
      const double m = sum / c_count;
      double sq = 0.0;
      for (int64_t c = 0; c < v.channels; ++c) sq += (x[v.index(n, c, s)] - m) * (x[v.index(n, c, s)] - m);
      st.mean[n * v.spatial + s] = m;
      st.rstd[n * v.spatial + s] = 1.0 / std::sqrt(sq / c_count + eps);
    }
  return st;
}

void layer_norm_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "layer_norm", "input");
  const NCS v(xt.desc);
  const std::vector<double> x = load(xt);
  const std::vector<double> gamma = load(required(optional_at(call.params, 0), "layer_norm", "weight"));
  const std::vector<double> beta = load(required(optional_at(call.params, 1), "layer_norm", "bias"));
  const PositionStats st = position_stats(x, v, call.op.norm.eps);
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < v.batch; ++n)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t s = 0; s < v.spatial; ++s) {
        const int64_t i = v.index(n, c, s), p = n * v.spatial + s;
        y[i] = (x[i] - st.mean[p]) * st.rstd[p] * gamma[c] + beta[c];
      }
  store(required(call.output, "layer_norm", "output"), y);
  if (Tensor* saved_mean = optional_at(call.aux, 0)) store(*saved_mean, st.mean);
  if (Tensor* saved_rstd = optional_at(call.aux, 1)) store(*saved_rstd, st.rstd);
}

void layer_norm_backward(const BackwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "layer_norm", "saved input");
  const NCS v(xt.desc);
  const auto c_count = static_cast<double>(v.channels);
  const std::vector<double> x = load(xt);
  const std::vector<double> g = load(required(call.grad_output, "layer_norm", "grad_output"));
  const std::vector<double> gamma = load(required(optional_at(call.params, 0), "layer_norm", "weight"));
  // The forward's saved statistics when given; recomputing them from the saved input (no running
  // statistics) gives the same values.
  PositionStats st;
  if (call.aux.size() >= 2 && call.aux[0] != nullptr && call.aux[1] != nullptr) {
    st.mean = load(*call.aux[0]);
    st.rstd = load(*call.aux[1]);
  } else {
    st = position_stats(x, v, call.op.norm.eps);
  }
  auto xhat = [&](int64_t n, int64_t c, int64_t s) {
    const int64_t p = n * v.spatial + s;
    return (x[v.index(n, c, s)] - st.mean[p]) * st.rstd[p];
  };
  if (Tensor* grad_x = optional_at(call.grad_inputs, 0)) {
    std::vector<double> gx(x.size());
    for (int64_t n = 0; n < v.batch; ++n)
      for (int64_t s = 0; s < v.spatial; ++s) {
        double sum_gg = 0.0, sum_gg_xhat = 0.0;
        for (int64_t c = 0; c < v.channels; ++c) {
          const double gg = g[v.index(n, c, s)] * gamma[c];
          sum_gg += gg;
          sum_gg_xhat += gg * xhat(n, c, s);
        }
        const double rstd = st.rstd[n * v.spatial + s];
        for (int64_t c = 0; c < v.channels; ++c) {
          const int64_t i = v.index(n, c, s);
          gx[i] = norm_input_grad(g[i] * gamma[c], xhat(n, c, s), rstd, sum_gg, sum_gg_xhat, c_count);
        }
      }
    store(*grad_x, gx);
  }
  store_affine_grads(call, g, v, xhat);
}

}  // namespace

void register_layer_norm_kernels(KernelTable& table) {
  table.add(OpKind::layer_norm, {layer_norm_forward, layer_norm_backward});
}

}  // namespace convbench::reference

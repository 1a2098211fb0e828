// linear: y[n, o] = bias[o] + sum_i x[n, i] w[o, i] on activations whose spatial sizes are 1 (so
// the logical order is the (N, in) and (N, out) matrices'); backward is its adjoint.
#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

struct LinearDims {
  int64_t n, in, out;
};

LinearDims linear_dims(const TensorDesc& in, const Op& op) {
  return {in.batch(), in.channels(), op.linear.out_features};
}

}  // namespace

void linear_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "linear", "input");
  const LinearDims d = linear_dims(xt.desc, call.op);
  const std::vector<double> x = load(xt);
  const std::vector<double> w = load(required(optional_at(call.params, 0), "linear", "weight"));
  std::vector<double> bias(static_cast<size_t>(d.out), 0.0);
  if (call.op.linear.bias) bias = load(required(optional_at(call.params, 1), "linear", "bias"));
  std::vector<double> y(static_cast<size_t>(d.n * d.out));
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t o = 0; o < d.out; ++o) {
      double sum = bias[static_cast<size_t>(o)];
      for (int64_t i = 0; i < d.in; ++i) sum += x[n * d.in + i] * w[o * d.in + i];
      y[n * d.out + o] = sum;
    }
  store(required(call.output, "linear", "output"), y);
}

// grad_x = g w, grad_w = g^T x (from the saved input), grad_bias = sum over n of g.
void linear_backward(const BackwardCall& call) {
  const LinearDims d = linear_dims(call.graph.desc(call.op.inputs.at(0)), call.op);
  const std::vector<double> g = load(required(call.grad_output, "linear", "grad_output"));
  if (Tensor* grad_x = optional_at(call.grad_inputs, 0)) {
    const std::vector<double> w = load(required(optional_at(call.params, 0), "linear", "weight"));
    std::vector<double> gx(static_cast<size_t>(d.n * d.in), 0.0);
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t o = 0; o < d.out; ++o)
        for (int64_t i = 0; i < d.in; ++i) gx[n * d.in + i] += g[n * d.out + o] * w[o * d.in + i];
    store(*grad_x, gx);
  }
  if (Tensor* grad_w = optional_at(call.grad_params, 0)) {
    const std::vector<double> x = load(required(optional_at(call.inputs, 0), "linear", "saved input"));
    std::vector<double> gw(static_cast<size_t>(d.out * d.in), 0.0);
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t o = 0; o < d.out; ++o)
        for (int64_t i = 0; i < d.in; ++i) gw[o * d.in + i] += g[n * d.out + o] * x[n * d.in + i];
    store(*grad_w, gw);
  }
  Tensor* grad_b = call.op.linear.bias ? optional_at(call.grad_params, 1) : nullptr;
  if (grad_b != nullptr) {
    std::vector<double> gb(static_cast<size_t>(d.out), 0.0);
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t o = 0; o < d.out; ++o) gb[static_cast<size_t>(o)] += g[n * d.out + o];
    store(*grad_b, gb);
  }
}

void register_linear_kernels(KernelTable& table) { table.add(OpKind::linear, {linear_forward, linear_backward}); }

}  // namespace convbench::reference

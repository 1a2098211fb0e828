// Element-wise ops: relu, leaky_relu, sigmoid, silu, hardswish, hardsigmoid, relu6, gelu, dropout, channel_dropout,
// drop_path, add, sub, mul, layer_scale. Element i of every vector here is logical element i, which is what makes the
// dropout mask agree across layouts.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "backends/reference/reference_kernels.hpp"
#include "runtime/philox.hpp"

namespace convbench::reference {
namespace {

template <class F>
std::vector<double> map(const std::vector<double>& a, F f) {
  std::vector<double> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i]);
  return out;
}

template <class F>
std::vector<double> zip(const std::vector<double>& a, const std::vector<double>& b, F f) {
  if (a.size() != b.size()) throw std::invalid_argument("reference backend: operands differ in size");
  std::vector<double> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i]);
  return out;
}

// 1/(1-p): dropout scales what it keeps so that the expected value is unchanged.
double keep_scale(const Op& op) { return 1.0 / (1.0 - op.dropout_p); }

// 1 / (1 + exp(-x)): exp overflows to inf for x < -709 and the result is 0, as it should be.
void sigmoid_forward(const ForwardCall& call) {
  const std::vector<double> x = load(required(optional_at(call.inputs, 0), "sigmoid", "input"));
  store(required(call.output, "sigmoid", "output"), map(x, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }));
}

// From the saved output, as PyTorch's sigmoid_backward: dx = g * y * (1 - y).
void sigmoid_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const std::vector<double> y = load(required(call.output, "sigmoid", "saved output"));
  const std::vector<double> g = load(required(call.grad_output, "sigmoid", "grad_output"));
  store(*grad_x, zip(g, y, [](double gv, double yv) { return gv * yv * (1.0 - yv); }));
}

// The activations whose backward reads their saved input (ops/input_saving_activation.hpp): each
// as its formula in double, the derivative as PyTorch's *_backward computes it, boundaries included.
double gelu_cdf(double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }
constexpr double kGeluTanhScale = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluTanhCubic = 0.044715;

double activation_value(const Op& op, double x) {
  switch (op.kind) {
    case OpKind::silu: return x / (1.0 + std::exp(-x));
    case OpKind::hardswish: return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case OpKind::hardsigmoid: return std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case OpKind::relu6: return std::min(std::max(x, 0.0), 6.0);
    case OpKind::gelu:
      if (op.gelu_approximate == GeluApproximation::tanh)
        return 0.5 * x * (1.0 + std::tanh(kGeluTanhScale * (x + kGeluTanhCubic * x * x * x)));
      return x * gelu_cdf(x);
    default: throw std::logic_error("reference backend: " + std::string(to_string(op.kind)) + " is no such activation");
  }
}

double activation_slope(const Op& op, double x) {
  switch (op.kind) {
    case OpKind::silu: {
      const double s = 1.0 / (1.0 + std::exp(-x));
      return s * (1.0 + x * (1.0 - s));
    }
    case OpKind::hardswish: return x < -3.0 ? 0.0 : x <= 3.0 ? x / 3.0 + 0.5 : 1.0;
    case OpKind::hardsigmoid:
      // PyTorch's kernels (CPU and CUDA) multiply by 1/6 rounded to float, in float64 too: the
      // same constant here keeps a float64 step equal to PyTorch's (exact 1/6 is 3e-8 away).
      return x > -3.0 && x < 3.0 ? static_cast<double>(1.0f / 6.0f) : 0.0;
    case OpKind::relu6: return x > 0.0 && x < 6.0 ? 1.0 : 0.0;
    case OpKind::gelu:
      if (op.gelu_approximate == GeluApproximation::tanh) {
        const double inner = kGeluTanhScale * (x + kGeluTanhCubic * x * x * x);
        const double t = std::tanh(inner);
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kGeluTanhScale * (1.0 + 3.0 * kGeluTanhCubic * x * x);
      }
      return gelu_cdf(x) + x * gelu_pdf(x);
    default: throw std::logic_error("reference backend: " + std::string(to_string(op.kind)) + " is no such activation");
  }
}

void input_saving_activation_forward(const ForwardCall& call) {
  const char* name = to_string(call.op.kind).data();
  const std::vector<double> x = load(required(optional_at(call.inputs, 0), name, "input"));
  store(required(call.output, name, "output"), map(x, [&](double v) { return activation_value(call.op, v); }));
}

void input_saving_activation_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const char* name = to_string(call.op.kind).data();
  const std::vector<double> x = load(required(optional_at(call.inputs, 0), name, "saved input"));
  const std::vector<double> g = load(required(call.grad_output, name, "grad_output"));
  store(*grad_x, zip(g, x, [&](double gv, double xv) { return gv * activation_slope(call.op, xv); }));
}

// channel_dropout and drop_path drop whole units of the input: a channel (n, c), numbered n*C + c,
// or a sample n. Logical element i belongs to unit i / span (span: the spatial size, or C times
// it); the unit is kept when dropout_keep(unit, seed, p). The saved noise holds 0 or 1/(1-p) per
// unit (PyTorch's noise); the output is x * mask * scale in double.
int64_t noise_span(const Op& op, const TensorDesc& d) {
  return op.kind == OpKind::drop_path ? d.channels() * d.spatial_size() : d.spatial_size();
}

void unit_dropout_forward(const ForwardCall& call) {
  const char* name = to_string(call.op.kind).data();
  const Tensor& xt = required(optional_at(call.inputs, 0), name, "input");
  const std::vector<double> x = load(xt);
  Tensor& out = required(call.output, name, "output");
  if (!call.training) {
    store(out, x);
    return;
  }
  const float p = static_cast<float>(call.op.dropout_p);
  const double scale = keep_scale(call.op);
  const int64_t span = noise_span(call.op, xt.desc), units = xt.desc.numel() / span;
  std::vector<double> noise(static_cast<size_t>(units)), y(x.size());
  for (int64_t u = 0; u < units; ++u) {
    const double m = dropout_keep(static_cast<uint64_t>(u), call.seed, p) ? 1.0 : 0.0;
    noise[static_cast<size_t>(u)] = m * scale;
    for (int64_t s = 0; s < span; ++s) y[u * span + s] = x[u * span + s] * m * scale;
  }
  store(out, y);
  if (Tensor* saved_noise = optional_at(call.aux, 0)) store(*saved_noise, noise);
}

// g * mask * scale, the mask read from the saved noise (nonzero: kept), so that a noise rounded to
// a lower precision still scales by the exact 1/(1-p) in double.
void unit_dropout_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const char* name = to_string(call.op.kind).data();
  const double scale = keep_scale(call.op);
  const std::vector<double> noise = load(required(optional_at(call.aux, 0), name, "saved noise"));
  std::vector<double> g = load(required(call.grad_output, name, "grad_output"));
  const auto span = static_cast<size_t>(noise_span(call.op, grad_x->desc));
  for (size_t i = 0; i < g.size(); ++i) g[i] *= noise[i / span] != 0.0 ? scale : 0.0;
  store(*grad_x, g);
}

}  // namespace

// max(x, 0) with std::max's argument order keeps NaN, as torch.relu does.
void relu_forward(const ForwardCall& call) {
  const std::vector<double> x = load(required(optional_at(call.inputs, 0), "relu", "input"));
  store(required(call.output, "relu", "output"), map(x, [](double v) { return std::max(v, 0.0); }));
}

// From the saved output, as PyTorch's threshold_backward: the gradient passes where y > 0.
void relu_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const std::vector<double> y = load(required(call.output, "relu", "saved output"));
  const std::vector<double> g = load(required(call.grad_output, "relu", "grad_output"));
  store(*grad_x, zip(g, y, [](double gv, double yv) { return yv <= 0.0 ? 0.0 : gv; }));
}

void leaky_relu_forward(const ForwardCall& call) {
  const double slope = call.op.negative_slope;
  const std::vector<double> x = load(required(optional_at(call.inputs, 0), "leaky_relu", "input"));
  store(required(call.output, "leaky_relu", "output"), map(x, [slope](double v) { return v > 0.0 ? v : v * slope; }));
}

// From the saved input: g where x > 0, g * slope elsewhere. Run in place, the op saved its output
// instead, which is positive exactly where the input was (negative_slope >= 0).
void leaky_relu_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const double slope = call.op.negative_slope;
  const Tensor* saved = optional_at(call.inputs, 0) ? optional_at(call.inputs, 0) : call.output;
  const std::vector<double> x = load(required(saved, "leaky_relu", "saved input or output"));
  const std::vector<double> g = load(required(call.grad_output, "leaky_relu", "grad_output"));
  store(*grad_x, zip(g, x, [slope](double gv, double xv) { return xv > 0.0 ? gv : gv * slope; }));
}

// Training: keep logical element i when dropout_keep(i, seed, p), scale kept ones by 1/(1-p), and
// save the 0/1 mask. Inference: the identity (the executor normally aliases instead of calling).
void dropout_forward(const ForwardCall& call) {
  const std::vector<double> x = load(required(optional_at(call.inputs, 0), "dropout", "input"));
  Tensor& out = required(call.output, "dropout", "output");
  if (!call.training) {
    store(out, x);
    return;
  }
  const float p = static_cast<float>(call.op.dropout_p);
  const double scale = keep_scale(call.op);
  std::vector<double> mask(x.size());
  for (size_t i = 0; i < x.size(); ++i) mask[i] = dropout_keep(i, call.seed, p) ? 1.0 : 0.0;
  store(out, zip(x, mask, [scale](double xv, double m) { return xv * m * scale; }));
  if (Tensor* saved_mask = optional_at(call.aux, 0)) store(*saved_mask, mask);
}

void dropout_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const double scale = keep_scale(call.op);
  const std::vector<double> mask = load(required(optional_at(call.aux, 0), "dropout", "saved mask"));
  const std::vector<double> g = load(required(call.grad_output, "dropout", "grad_output"));
  store(*grad_x, zip(g, mask, [scale](double gv, double m) { return gv * m * scale; }));
}

void add_forward(const ForwardCall& call) {
  const std::vector<double> a = load(required(optional_at(call.inputs, 0), "add", "first operand"));
  const std::vector<double> b = load(required(optional_at(call.inputs, 1), "add", "second operand"));
  store(required(call.output, "add", "output"), zip(a, b, [](double x, double y) { return x + y; }));
}

// The executor aliases both gradients of add (grad_flow() is alias), so normally there is nothing
// to write; any gradient tensor it does pass receives g, the derivative for either operand.
void add_backward(const BackwardCall& call) {
  Tensor* ga = optional_at(call.grad_inputs, 0);
  Tensor* gb = optional_at(call.grad_inputs, 1);
  if (ga == nullptr && gb == nullptr) return;
  const std::vector<double> g = load(required(call.grad_output, "add", "grad_output"));
  if (ga != nullptr) store(*ga, g);
  if (gb != nullptr) store(*gb, g);
}

void sub_forward(const ForwardCall& call) {
  const std::vector<double> a = load(required(optional_at(call.inputs, 0), "sub", "first operand"));
  const std::vector<double> b = load(required(optional_at(call.inputs, 1), "sub", "second operand"));
  store(required(call.output, "sub", "output"), zip(a, b, [](double x, double y) { return x - y; }));
}

// d(a - b)/da = 1 (normally aliased by the executor), d(a - b)/db = -1.
void sub_backward(const BackwardCall& call) {
  Tensor* ga = optional_at(call.grad_inputs, 0);
  Tensor* gb = optional_at(call.grad_inputs, 1);
  if (ga == nullptr && gb == nullptr) return;
  const std::vector<double> g = load(required(call.grad_output, "sub", "grad_output"));
  if (ga != nullptr) store(*ga, g);
  if (gb != nullptr) store(*gb, map(g, [](double v) { return -v; }));
}

namespace {

// mul's second operand is a's shape or (N, C, 1, ...): logical element i of a meets element
// i / spatial of b then (a's logical order is (n, c, spatial)), else element i.
size_t mul_b_index(size_t i, const TensorDesc& a, const TensorDesc& b) {
  return a.shape == b.shape ? i : i / static_cast<size_t>(a.spatial_size());
}

void mul_forward(const ForwardCall& call) {
  const Tensor& ta = required(optional_at(call.inputs, 0), "mul", "first operand");
  const Tensor& tb = required(optional_at(call.inputs, 1), "mul", "second operand");
  const std::vector<double> a = load(ta), b = load(tb);
  std::vector<double> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] * b[mul_b_index(i, ta.desc, tb.desc)];
  store(required(call.output, "mul", "output"), out);
}

// grad_a = g * b (from the saved b), grad_b = g * a (from the saved a), summed over space when b
// is broadcast.
void mul_backward(const BackwardCall& call) {
  Tensor* ga = optional_at(call.grad_inputs, 0);
  Tensor* gb = optional_at(call.grad_inputs, 1);
  if (ga == nullptr && gb == nullptr) return;
  const TensorDesc& a_desc = call.graph.desc(call.op.inputs.at(0));
  const TensorDesc& b_desc = call.graph.desc(call.op.inputs.at(1));
  const std::vector<double> g = load(required(call.grad_output, "mul", "grad_output"));
  if (ga != nullptr) {
    const std::vector<double> b = load(required(optional_at(call.inputs, 1), "mul", "saved second operand"));
    std::vector<double> out(g.size());
    for (size_t i = 0; i < g.size(); ++i) out[i] = g[i] * b[mul_b_index(i, a_desc, b_desc)];
    store(*ga, out);
  }
  if (gb != nullptr) {
    const std::vector<double> a = load(required(optional_at(call.inputs, 0), "mul", "saved first operand"));
    std::vector<double> out(static_cast<size_t>(b_desc.numel()), 0.0);
    for (size_t i = 0; i < g.size(); ++i) out[mul_b_index(i, a_desc, b_desc)] += g[i] * a[i];
    store(*gb, out);
  }
}

// layer_scale: y = w[c] * x; grad_x = g * w[c], grad_w[c] = sum over N and space of g * x.
void layer_scale_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "layer_scale", "input");
  const std::vector<double> x = load(xt);
  const std::vector<double> w = load(required(optional_at(call.params, 0), "layer_scale", "weight"));
  const NCS v(xt.desc);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * w[i / static_cast<size_t>(v.spatial) % w.size()];
  store(required(call.output, "layer_scale", "output"), y);
}

void layer_scale_backward(const BackwardCall& call) {
  const std::vector<double> g = load(required(call.grad_output, "layer_scale", "grad_output"));
  const std::vector<double> w = load(required(optional_at(call.params, 0), "layer_scale", "weight"));
  const NCS v(call.graph.desc(call.op.inputs.at(0)));
  auto channel = [&](size_t i) { return i / static_cast<size_t>(v.spatial) % w.size(); };
  if (Tensor* gx = optional_at(call.grad_inputs, 0)) {
    std::vector<double> out(g.size());
    for (size_t i = 0; i < g.size(); ++i) out[i] = g[i] * w[channel(i)];
    store(*gx, out);
  }
  if (Tensor* gw = optional_at(call.grad_params, 0)) {
    const std::vector<double> x = load(required(optional_at(call.inputs, 0), "layer_scale", "saved input"));
    std::vector<double> out(w.size(), 0.0);
    for (size_t i = 0; i < g.size(); ++i) out[channel(i)] += g[i] * x[i];
    store(*gw, out);
  }
}

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  table.add(OpKind::relu, {relu_forward, relu_backward});
  table.add(OpKind::leaky_relu, {leaky_relu_forward, leaky_relu_backward});
  table.add(OpKind::dropout, {dropout_forward, dropout_backward});
  table.add(OpKind::add, {add_forward, add_backward});
  table.add(OpKind::sub, {sub_forward, sub_backward});
  table.add(OpKind::sigmoid, {sigmoid_forward, sigmoid_backward});
  table.add(OpKind::channel_dropout, {unit_dropout_forward, unit_dropout_backward});
  table.add(OpKind::drop_path, {unit_dropout_forward, unit_dropout_backward});
  table.add(OpKind::mul, {mul_forward, mul_backward});
  table.add(OpKind::layer_scale, {layer_scale_forward, layer_scale_backward});
  for (const OpKind kind : {OpKind::silu, OpKind::hardswish, OpKind::hardsigmoid, OpKind::relu6, OpKind::gelu})
    table.add(kind, {input_saving_activation_forward, input_saving_activation_backward});
}

}  // namespace convbench::reference

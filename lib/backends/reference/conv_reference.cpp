// Convolution and transposed convolution, forward and backward, with PyTorch's semantics: groups,
// stride, zero padding, dilation, optional bias, output_padding (transposed only).
//
// A window relates a strided grid to a dense grid: strided position o and kernel position k touch
// dense position o*stride - padding + k*dilation. For conv the output is strided and the input
// dense; for conv_transpose it is the other way round. Every kernel below loops over one output
// plane (or one weight element), then input channels and kernel positions, and innermost over the
// runs of positions a kernel position connects (for_each_tap_run). Each thread owns whole planes
// or weight rows, so threads never share an accumulator and results are bit-for-bit the same
// whatever the thread count.
#include <algorithm>

#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

// The sizes of one (transposed) convolution with spatial dims padded to three. `in` and `out`
// are the op's input and output grids; the weight is (out, in/g, k...) for conv and
// (in, out/g, k...) for conv_transpose, as in PyTorch.
struct ConvShape {
  int64_t batch = 0, in_channels = 0, out_channels = 0;
  int64_t in_per_group = 0, out_per_group = 0;
  Extent3 in{}, out{};
  Window window{};
  int64_t in_size = 0, out_size = 0, kernel_size = 0;

  // Upper bound of the multiply-adds of one pass (forward, grad-input and grad-weight alike).
  int64_t macs() const { return batch * std::max(in_size, out_size) * out_channels * in_per_group * kernel_size; }
  // Threads only pay off beyond tiny problems (finite-difference tests run thousands of those).
  bool parallel() const { return macs() > (int64_t{1} << 16); }
  Extent3 kernel_position(int64_t k) const { return unflatten(k, window.kernel); }
};

ConvShape conv_shape(const TensorDesc& in, const TensorDesc& out, const ConvAttrs& a) {
  ConvShape s;
  s.batch = in.batch();
  s.in_channels = in.channels();
  s.out_channels = out.channels();
  s.in_per_group = s.in_channels / a.groups;
  s.out_per_group = s.out_channels / a.groups;
  s.in = spatial_extent(in);
  s.out = spatial_extent(out);
  s.window = Window{per_dim(a.kernel, 1), per_dim(a.stride, 1), per_dim(a.padding, 0), per_dim(a.dilation, 1)};
  s.in_size = volume(s.in);
  s.out_size = volume(s.out);
  s.kernel_size = volume(s.window.kernel);
  return s;
}

// The shape of the op from the graph (a backward call has no output tensor to read it from).
ConvShape conv_shape(const Graph& graph, const Op& op) {
  return conv_shape(graph.desc(op.inputs.at(0)), graph.desc(op.output), op.conv);
}

std::vector<double> bias_values(const ForwardCall& call, int64_t channels, const char* op) {
  if (!call.op.conv.bias) return std::vector<double>(static_cast<size_t>(channels), 0.0);
  return load(required(optional_at(conv_weights(call), 1), op, "bias"));
}

// A tensor as an operand of the convolution's products. In tf32 runs the GPU's tensor cores see
// each float32 operand rounded to TF32 (10 mantissa bits) and accumulate in float32: the oracle
// rounds the operands the same way, so that it computes what the hardware computes, and only
// the order of the sums is left to differ. The bias and the sums themselves stay exact.
std::vector<double> load_operand(const Tensor& t) {
  std::vector<double> v = load(t);
  if (t.desc.dtype == DType::tf32)
    for (double& x : v) x = round_to_tf32(static_cast<float>(x));
  return v;
}

std::vector<double> as_operand(std::vector<double> v, DType dtype) {
  if (dtype == DType::tf32)
    for (double& x : v) x = round_to_tf32(static_cast<float>(x));
  return v;
}

// grad_bias[c] = sum of grad_output over batch and space.
void write_bias_grad(const BackwardCall& call, const std::vector<double>& g, const ConvShape& s) {
  Tensor* grad_bias = call.op.conv.bias ? optional_at(call.grad_params, 1) : nullptr;
  if (grad_bias == nullptr) return;
  std::vector<double> gb(static_cast<size_t>(s.out_channels), 0.0);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.out_channels; ++c)
      for (int64_t o = 0; o < s.out_size; ++o) gb[c] += g[(n * s.out_channels + c) * s.out_size + o];
  store(*grad_bias, gb);
}

}  // namespace

// y[n, co, o] = bias[co] + sum over ci in co's group and k of x[n, ci, o*stride - pad + k*dil] * w[co, ci, k]
void conv_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "conv", "input");
  Tensor& yt = required(call.output, "conv", "output");
  const ConvShape s = conv_shape(xt.desc, yt.desc, call.op.conv);
  const std::vector<double> x = load_operand(xt);
  const std::vector<double> w = load_operand(required(optional_at(conv_weights(call), 0), "conv", "weight"));
  const std::vector<double> bias = bias_values(call, s.out_channels, "conv");
  std::vector<double> y(static_cast<size_t>(yt.desc.numel()));
#pragma omp parallel for collapse(2) schedule(static) if (s.parallel())
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t co = 0; co < s.out_channels; ++co) {
      const int64_t ci0 = co / s.out_per_group * s.in_per_group;
      double* yp = &y[(n * s.out_channels + co) * s.out_size];
      std::fill(yp, yp + s.out_size, bias[co]);
      for (int64_t j = 0; j < s.in_per_group; ++j) {
        const double* xp = &x[(n * s.in_channels + ci0 + j) * s.in_size];
        const double* wp = &w[(co * s.in_per_group + j) * s.kernel_size];
        for (int64_t k = 0; k < s.kernel_size; ++k) {
          const double wk = wp[k];
          for_each_tap_run(s.window, s.kernel_position(k), s.out, s.in, [&](const TapRun& r) {
            for (int64_t t = 0; t < r.count; ++t) yp[r.strided + t] += wk * xp[r.dense + t * r.dense_step];
          });
        }
      }
    }
  }
  store(yt, y);
}

void conv_backward(const BackwardCall& call) {
  const ConvShape s = conv_shape(call.graph, call.op);
  const Tensor& gt = required(call.grad_output, "conv", "grad_output");
  const std::vector<double> g_exact = load(gt);  // for the bias gradient, a plain sum
  const std::vector<double> g = as_operand(g_exact, gt.desc.dtype);

  // grad_x[n, ci, i] = sum over co in ci's group and the (k, o) with o*stride - pad + k*dil = i
  // of g[n, co, o] * w[co, ci, k]
  if (Tensor* grad_x = optional_at(call.grad_inputs, 0)) {
    const std::vector<double> w = load_operand(required(optional_at(conv_weights(call), 0), "conv", "weight"));
    std::vector<double> gx(static_cast<size_t>(grad_x->desc.numel()), 0.0);
#pragma omp parallel for collapse(2) schedule(static) if (s.parallel())
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t ci = 0; ci < s.in_channels; ++ci) {
        const int64_t co0 = ci / s.in_per_group * s.out_per_group;
        const int64_t j = ci % s.in_per_group;
        double* gxp = &gx[(n * s.in_channels + ci) * s.in_size];
        for (int64_t c = 0; c < s.out_per_group; ++c) {
          const double* gp = &g[(n * s.out_channels + co0 + c) * s.out_size];
          const double* wp = &w[((co0 + c) * s.in_per_group + j) * s.kernel_size];
          for (int64_t k = 0; k < s.kernel_size; ++k) {
            const double wk = wp[k];
            for_each_tap_run(s.window, s.kernel_position(k), s.out, s.in, [&](const TapRun& r) {
              for (int64_t t = 0; t < r.count; ++t) gxp[r.dense + t * r.dense_step] += wk * gp[r.strided + t];
            });
          }
        }
      }
    }
    store(*grad_x, gx);
  }

  // grad_w[co, j, k] = sum over n and o of g[n, co, o] * x[n, ci0 + j, o*stride - pad + k*dil]
  if (Tensor* grad_w = optional_at(call.grad_params, 0)) {
    const std::vector<double> x = load_operand(required(optional_at(call.inputs, 0), "conv", "saved input"));
    std::vector<double> gw(static_cast<size_t>(grad_w->desc.numel()));
#pragma omp parallel for collapse(2) schedule(static) if (s.parallel())
    for (int64_t co = 0; co < s.out_channels; ++co) {
      for (int64_t j = 0; j < s.in_per_group; ++j) {
        const int64_t ci = co / s.out_per_group * s.in_per_group + j;
        for (int64_t k = 0; k < s.kernel_size; ++k) {
          double acc = 0.0;
          for (int64_t n = 0; n < s.batch; ++n) {
            const double* gp = &g[(n * s.out_channels + co) * s.out_size];
            const double* xp = &x[(n * s.in_channels + ci) * s.in_size];
            for_each_tap_run(s.window, s.kernel_position(k), s.out, s.in, [&](const TapRun& r) {
              // A sum: let it use vector lanes (a fixed order per build, so still deterministic).
              double run_sum = 0.0;
#pragma omp simd reduction(+ : run_sum)
              for (int64_t t = 0; t < r.count; ++t) run_sum += gp[r.strided + t] * xp[r.dense + t * r.dense_step];
              acc += run_sum;
            });
          }
          gw[(co * s.in_per_group + j) * s.kernel_size + k] = acc;
        }
      }
    }
    store(*grad_w, gw);
  }

  write_bias_grad(call, g_exact, s);
}

// y[n, co, o] = bias[co] + sum over ci in co's group and the (k, i) with i*stride - pad + k*dil = o
// of x[n, ci, i] * w[ci, co, k]. output_padding only makes the output larger (its shape comes
// from the graph); positions no input reaches receive the bias alone.
void conv_transpose_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "conv_transpose", "input");
  Tensor& yt = required(call.output, "conv_transpose", "output");
  const ConvShape s = conv_shape(xt.desc, yt.desc, call.op.conv);
  const std::vector<double> x = load_operand(xt);
  const std::vector<double> w = load_operand(required(optional_at(call.params, 0), "conv_transpose", "weight"));
  const std::vector<double> bias = bias_values(call, s.out_channels, "conv_transpose");
  std::vector<double> y(static_cast<size_t>(yt.desc.numel()));
#pragma omp parallel for collapse(2) schedule(static) if (s.parallel())
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t co = 0; co < s.out_channels; ++co) {
      const int64_t ci0 = co / s.out_per_group * s.in_per_group;
      const int64_t c = co % s.out_per_group;
      double* yp = &y[(n * s.out_channels + co) * s.out_size];
      std::fill(yp, yp + s.out_size, bias[co]);
      for (int64_t j = 0; j < s.in_per_group; ++j) {
        const double* xp = &x[(n * s.in_channels + ci0 + j) * s.in_size];
        const double* wp = &w[((ci0 + j) * s.out_per_group + c) * s.kernel_size];
        for (int64_t k = 0; k < s.kernel_size; ++k) {
          const double wk = wp[k];
          for_each_tap_run(s.window, s.kernel_position(k), s.in, s.out, [&](const TapRun& r) {
            for (int64_t t = 0; t < r.count; ++t) yp[r.dense + t * r.dense_step] += wk * xp[r.strided + t];
          });
        }
      }
    }
  }
  store(yt, y);
}

void conv_transpose_backward(const BackwardCall& call) {
  const ConvShape s = conv_shape(call.graph, call.op);
  const Tensor& gt = required(call.grad_output, "conv_transpose", "grad_output");
  const std::vector<double> g_exact = load(gt);  // for the bias gradient, a plain sum
  const std::vector<double> g = as_operand(g_exact, gt.desc.dtype);

  // grad_x[n, ci, i] = sum over co in ci's group and k of g[n, co, i*stride - pad + k*dil] * w[ci, co, k]
  if (Tensor* grad_x = optional_at(call.grad_inputs, 0)) {
    const std::vector<double> w = load_operand(required(optional_at(call.params, 0), "conv_transpose", "weight"));
    std::vector<double> gx(static_cast<size_t>(grad_x->desc.numel()), 0.0);
#pragma omp parallel for collapse(2) schedule(static) if (s.parallel())
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t ci = 0; ci < s.in_channels; ++ci) {
        const int64_t co0 = ci / s.in_per_group * s.out_per_group;
        double* gxp = &gx[(n * s.in_channels + ci) * s.in_size];
        for (int64_t c = 0; c < s.out_per_group; ++c) {
          const double* gp = &g[(n * s.out_channels + co0 + c) * s.out_size];
          const double* wp = &w[(ci * s.out_per_group + c) * s.kernel_size];
          for (int64_t k = 0; k < s.kernel_size; ++k) {
            const double wk = wp[k];
            for_each_tap_run(s.window, s.kernel_position(k), s.in, s.out, [&](const TapRun& r) {
              for (int64_t t = 0; t < r.count; ++t) gxp[r.strided + t] += wk * gp[r.dense + t * r.dense_step];
            });
          }
        }
      }
    }
    store(*grad_x, gx);
  }

  // grad_w[ci, c, k] = sum over n and i of x[n, ci, i] * g[n, co0 + c, i*stride - pad + k*dil]
  if (Tensor* grad_w = optional_at(call.grad_params, 0)) {
    const std::vector<double> x = load_operand(required(optional_at(call.inputs, 0), "conv_transpose", "saved input"));
    std::vector<double> gw(static_cast<size_t>(grad_w->desc.numel()));
#pragma omp parallel for collapse(2) schedule(static) if (s.parallel())
    for (int64_t ci = 0; ci < s.in_channels; ++ci) {
      for (int64_t c = 0; c < s.out_per_group; ++c) {
        const int64_t co = ci / s.in_per_group * s.out_per_group + c;
        for (int64_t k = 0; k < s.kernel_size; ++k) {
          double acc = 0.0;
          for (int64_t n = 0; n < s.batch; ++n) {
            const double* xp = &x[(n * s.in_channels + ci) * s.in_size];
            const double* gp = &g[(n * s.out_channels + co) * s.out_size];
            for_each_tap_run(s.window, s.kernel_position(k), s.in, s.out, [&](const TapRun& r) {
              // A sum: let it use vector lanes (a fixed order per build, so still deterministic).
              double run_sum = 0.0;
#pragma omp simd reduction(+ : run_sum)
              for (int64_t t = 0; t < r.count; ++t) run_sum += xp[r.strided + t] * gp[r.dense + t * r.dense_step];
              acc += run_sum;
            });
          }
          gw[(ci * s.out_per_group + c) * s.kernel_size + k] = acc;
        }
      }
    }
    store(*grad_w, gw);
  }

  write_bias_grad(call, g_exact, s);
}

void register_conv_kernels(KernelTable& table) {
  table.add(OpKind::conv, {conv_forward, conv_backward});
  table.add(OpKind::conv_transpose, {conv_transpose_forward, conv_transpose_backward});
}

}  // namespace convbench::reference

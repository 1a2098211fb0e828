// linear in float32 on activations whose spatial sizes are 1, so both layouts store x as the
// row-major (N, in) matrix and y as (N, out): row-by-row dot products and axpys whose inner loops
// walk memory in order (vectorised), OpenMP over rows. A classifier head's matrices are small;
// these loops favour plainness over a tuned GEMM.
#include <cstring>

#include "backends/cpu/cpu_kernels.hpp"

namespace convbench::cpu {
namespace {

struct LinearDims {
  int64_t n, in, out;
};

LinearDims dims_of(const TensorDesc& x, const Op& op) { return {x.batch(), x.channels(), op.linear.out_features}; }

bool parallel(const LinearDims& d) { return d.n * d.in * d.out > (1 << 16); }

// y[n, o] = bias[o] + x[n, :] . w[o, :]
void linear_forward(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y, const LinearDims& d) {
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  const float* bp = bias ? bias->data<float>() : nullptr;
  float* yp = y.data<float>();
#pragma omp parallel for collapse(2) schedule(static) if (parallel(d))
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t o = 0; o < d.out; ++o) {
      const float* xr = xp + n * d.in;
      const float* wr = wp + o * d.in;
      float sum = 0.f;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < d.in; ++i) sum += xr[i] * wr[i];
      yp[n * d.out + o] = (bp ? bp[o] : 0.f) + sum;
    }
}

// grad_x[n, :] = sum_o g[n, o] w[o, :]
void linear_grad_input(const Tensor& g, const Tensor& w, Tensor& dx, const LinearDims& d) {
  const float* gp = g.data<float>();
  const float* wp = w.data<float>();
  float* dp = dx.data<float>();
#pragma omp parallel for schedule(static) if (parallel(d))
  for (int64_t n = 0; n < d.n; ++n) {
    float* dr = dp + n * d.in;
    std::memset(dr, 0, static_cast<size_t>(d.in) * sizeof(float));
    for (int64_t o = 0; o < d.out; ++o) {
      const float gv = gp[n * d.out + o];
      const float* wr = wp + o * d.in;
#pragma omp simd
      for (int64_t i = 0; i < d.in; ++i) dr[i] += gv * wr[i];
    }
  }
}

// grad_w[o, :] = sum_n g[n, o] x[n, :]; grad_bias[o] = sum_n g[n, o]
void linear_grad_params(const Tensor& g, const Tensor& x, Tensor* dw, Tensor* db, const LinearDims& d) {
  const float* gp = g.data<float>();
  const float* xp = x.data<float>();
  float* wp = dw ? dw->data<float>() : nullptr;
  float* bp = db ? db->data<float>() : nullptr;
#pragma omp parallel for schedule(static) if (parallel(d))
  for (int64_t o = 0; o < d.out; ++o) {
    float* wr = wp ? wp + o * d.in : nullptr;
    if (wr) std::memset(wr, 0, static_cast<size_t>(d.in) * sizeof(float));
    float bias_sum = 0.f;
    for (int64_t n = 0; n < d.n; ++n) {
      const float gv = gp[n * d.out + o];
      bias_sum += gv;
      if (!wr) continue;
      const float* xr = xp + n * d.in;
#pragma omp simd
      for (int64_t i = 0; i < d.in; ++i) wr[i] += gv * xr[i];
    }
    if (bp) bp[o] = bias_sum;
  }
}

}  // namespace

void register_linear_kernels(KernelTable& table) {
  table.add(OpKind::linear,
            {[](const ForwardCall& call) {
               const Tensor& x = need(at_or_null(call.inputs, 0), call.op, "input");
               const Tensor* bias = call.op.linear.bias ? &need(at_or_null(call.params, 1), call.op, "bias") : nullptr;
               linear_forward(x, need(at_or_null(call.params, 0), call.op, "weight"), bias, *call.output,
                              dims_of(x.desc, call.op));
             },
             [](const BackwardCall& call) {
               const LinearDims d = dims_of(call.graph.desc(call.op.inputs.at(0)), call.op);
               const Tensor& g = need(call.grad_output, call.op, "grad_output");
               if (Tensor* dx = at_or_null(call.grad_inputs, 0))
                 linear_grad_input(g, need(at_or_null(call.params, 0), call.op, "weight"), *dx, d);
               Tensor* dw = at_or_null(call.grad_params, 0);
               Tensor* db = call.op.linear.bias ? at_or_null(call.grad_params, 1) : nullptr;
               if (dw || db) linear_grad_params(g, need(at_or_null(call.inputs, 0), call.op, "saved input"), dw, db, d);
             }});
}

}  // namespace convbench::cpu

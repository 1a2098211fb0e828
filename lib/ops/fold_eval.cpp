#include "ops/fold_eval.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace convbench {

Op folded_conv_as_conv(const Op& op) {
  Op c = op;
  c.kind = OpKind::conv;
  c.fold = nullptr;
  return c;
}

TensorDesc fold_kernel_desc(const FoldProgram& program, DType dtype) {
  return TensorDesc{program.weight_shape(), dtype, Layout::channels_first};
}

TensorDesc fold_bias_desc(const FoldProgram& program, DType dtype) {
  return TensorDesc{{program.out().out_channels}, dtype, Layout::channels_first};
}

FoldLayout::FoldLayout(const FoldProgram& program) {
  for (const FoldRegister& r : program.registers) {
    kernel.push_back(elements);
    elements += r.kernel_numel();
    bias.push_back(elements);
    elements += r.bias ? r.out_channels : 0;
  }
}

bool fold_has_adjoint(const FoldProgram& program) {
  return std::none_of(program.steps.begin(), program.steps.end(),
                      [](const FoldStep& s) { return s.kind == FoldStepKind::batch_norm; });
}

namespace {

// A register's kernel and bias in a flat buffer, with its geometry.
template <class T>
struct Reg {
  T* k;
  T* b;  // nullptr without a bias
  const FoldRegister* r;
  int64_t at(int64_t co, int64_t ci, int64_t t0, int64_t t1, int64_t t2) const {
    return (((co * r->in_channels + ci) * r->taps[0] + t0) * r->taps[1] + t1) * r->taps[2] + t2;
  }
};

template <class T>
Reg<T> reg(const FoldProgram& p, const FoldLayout& l, T* base, int index) {
  const auto i = static_cast<size_t>(index);
  const FoldRegister& r = p.registers.at(i);
  return Reg<T>{base + l.kernel[i], r.bias ? base + l.bias[i] : nullptr, &r};
}

int64_t volume(const FoldExtent& e) { return e[0] * e[1] * e[2]; }

// The kernel position q (flat, row-major over s.kernel) as a tap offset in dst: tap_step * q.
FoldExtent conv_offset(const FoldStep& s, int64_t q) {
  const int64_t q2 = q % s.kernel[2], q1 = q / s.kernel[2] % s.kernel[1], q0 = q / (s.kernel[2] * s.kernel[1]);
  return {q0 * s.tap_step[0], q1 * s.tap_step[1], q2 * s.tap_step[2]};
}

// The rows of one output channel c2 of dst and one channel c1 of src, over every input channel c0
// (both registers have the same in_channels): d[c0][o + t] (+)= w * s[c0][t] for src's taps t,
// and the dot product of the two. Pointer strides, not index arithmetic per element: a 1x1
// source (one tap) makes the inner loops a strided axpy over c0.
template <class T>
void axpy_taps(T* d_row, const FoldExtent& dt, const T* s_row, const FoldExtent& st, int64_t channels,
               const FoldExtent& o, T w) {
  const int64_t dv = volume(dt), sv = volume(st), first = (o[0] * dt[1] + o[1]) * dt[2] + o[2];
  if (sv == 1) {
    for (int64_t c0 = 0; c0 < channels; ++c0) d_row[c0 * dv + first] += w * s_row[c0];
    return;
  }
  for (int64_t c0 = 0; c0 < channels; ++c0) {
    T* d = d_row + c0 * dv + first;
    const T* x = s_row + c0 * sv;
    for (int64_t a = 0; a < st[0]; ++a)
      for (int64_t b = 0; b < st[1]; ++b) {
        T* dd = d + (a * dt[1] + b) * dt[2];
        const T* xx = x + (a * st[1] + b) * st[2];
        for (int64_t c = 0; c < st[2]; ++c) dd[c] += w * xx[c];
      }
  }
}

template <class T>
T dot_taps(const T* d_row, const FoldExtent& dt, const T* s_row, const FoldExtent& st, int64_t channels,
           const FoldExtent& o) {
  const int64_t dv = volume(dt), sv = volume(st), first = (o[0] * dt[1] + o[1]) * dt[2] + o[2];
  T acc = T(0);
  if (sv == 1) {
    for (int64_t c0 = 0; c0 < channels; ++c0) acc += d_row[c0 * dv + first] * s_row[c0];
    return acc;
  }
  for (int64_t c0 = 0; c0 < channels; ++c0) {
    const T* d = d_row + c0 * dv + first;
    const T* x = s_row + c0 * sv;
    for (int64_t a = 0; a < st[0]; ++a)
      for (int64_t b = 0; b < st[1]; ++b) {
        const T* dd = d + (a * dt[1] + b) * dt[2];
        const T* xx = x + (a * st[1] + b) * st[2];
        for (int64_t c = 0; c < st[2]; ++c) acc += dd[c] * xx[c];
      }
  }
  return acc;
}

// The adjoint of axpy_taps for the source: s[c0][t] += w * d[c0][o + t].
template <class T>
void gather_taps(T* s_row, const FoldExtent& st, const T* d_row, const FoldExtent& dt, int64_t channels,
                 const FoldExtent& o, T w) {
  const int64_t dv = volume(dt), sv = volume(st), first = (o[0] * dt[1] + o[1]) * dt[2] + o[2];
  if (sv == 1) {
    for (int64_t c0 = 0; c0 < channels; ++c0) s_row[c0] += w * d_row[c0 * dv + first];
    return;
  }
  for (int64_t c0 = 0; c0 < channels; ++c0) {
    const T* d = d_row + c0 * dv + first;
    T* x = s_row + c0 * sv;
    for (int64_t a = 0; a < st[0]; ++a)
      for (int64_t b = 0; b < st[1]; ++b) {
        const T* dd = d + (a * dt[1] + b) * dt[2];
        T* xx = x + (a * st[1] + b) * st[2];
        for (int64_t c = 0; c < st[2]; ++c) xx[c] += w * dd[c];
      }
  }
}

template <class T>
void compose_forward(const FoldProgram& p, const FoldLayout& l, const FoldStep& s,
                     const std::vector<const T*>& operands, T* base) {
  const Reg<T> dst = reg(p, l, base, s.dst);
  const int64_t co_n = dst.r->out_channels, kq = volume(s.kernel);
  const int64_t per_group = s.channels / s.groups, out_per_group = co_n / s.groups;
  const T* w = operands.at(static_cast<size_t>(s.weight));
  auto weight = [&](int64_t c2, int64_t j, int64_t q) { return w[(c2 * per_group + j) * kq + q]; };
  if (s.src < 0) {  // from the identity: the conv's own weight, placed at its taps
#pragma omp parallel for schedule(static) if (co_n * per_group * kq > (1 << 16))
    for (int64_t c2 = 0; c2 < co_n; ++c2) {
      const int64_t g0 = c2 / out_per_group * per_group;
      for (int64_t j = 0; j < per_group; ++j)
        for (int64_t q = 0; q < kq; ++q) {
          const FoldExtent o = conv_offset(s, q);
          dst.k[dst.at(c2, s.src_channel + g0 + j, o[0], o[1], o[2])] += weight(c2, j, q);
        }
    }
  } else {
    const Reg<T> src = reg(p, l, base, s.src);
    const int64_t ci_n = src.r->in_channels;
    const FoldExtent& ts = src.r->taps;
#pragma omp parallel for schedule(static) if (co_n * per_group * kq * ci_n * volume(ts) > (1 << 16))
    for (int64_t c2 = 0; c2 < co_n; ++c2) {
      const int64_t g0 = c2 / out_per_group * per_group;
      for (int64_t j = 0; j < per_group; ++j)
        for (int64_t q = 0; q < kq; ++q) {
          axpy_taps(dst.k + dst.at(c2, 0, 0, 0, 0), dst.r->taps, src.k + src.at(g0 + j, 0, 0, 0, 0), ts, ci_n,
                    conv_offset(s, q), weight(c2, j, q));
        }
    }
  }
  if (dst.b == nullptr) return;
  for (int64_t c2 = 0; c2 < co_n; ++c2) {
    T acc = s.bias >= 0 ? operands.at(static_cast<size_t>(s.bias))[c2] : T(0);
    if (s.src >= 0) {
      const Reg<T> src = reg(p, l, base, s.src);
      if (src.b != nullptr) {
        const int64_t g0 = c2 / out_per_group * per_group;
        for (int64_t j = 0; j < per_group; ++j)
          for (int64_t q = 0; q < kq; ++q) acc += weight(c2, j, q) * src.b[g0 + j];
      }
    }
    dst.b[c2] = acc;
  }
}

template <class T>
void accumulate_forward(const FoldProgram& p, const FoldLayout& l, const FoldStep& s, T* base) {
  const Reg<T> dst = reg(p, l, base, s.dst);
  const T scale = static_cast<T>(s.scale);
  const FoldExtent& sh = s.shift;
  if (s.src < 0) {
    for (int64_t c = 0; c < s.channels; ++c)
      dst.k[dst.at(s.dst_channel + c, s.src_channel + c, sh[0], sh[1], sh[2])] += scale;
    return;
  }
  const Reg<T> src = reg(p, l, base, s.src);
  const FoldExtent& ts = src.r->taps;
  for (int64_t c = 0; c < s.channels; ++c)
    for (int64_t c0 = 0; c0 < src.r->in_channels; ++c0)
      for (int64_t a = 0; a < ts[0]; ++a)
        for (int64_t b = 0; b < ts[1]; ++b) {
          T* d = &dst.k[dst.at(s.dst_channel + c, c0, a + sh[0], b + sh[1], sh[2])];
          const T* x = &src.k[src.at(s.src_channel + c, c0, a, b, 0)];
          for (int64_t t = 0; t < ts[2]; ++t) d[t] += scale * x[t];
        }
  if (src.b != nullptr)
    for (int64_t c = 0; c < s.channels; ++c) dst.b[s.dst_channel + c] += scale * src.b[s.src_channel + c];
}

template <class T>
void batch_norm_forward(const FoldProgram& p, const FoldLayout& l, const FoldStep& s,
                        const std::vector<const T*>& operands, T* base) {
  const Reg<T> dst = reg(p, l, base, s.dst);
  const int64_t per_channel = dst.r->in_channels * dst.r->tap_count();
  for (int64_t c = 0; c < dst.r->out_channels; ++c) {
    const T gamma = operands.at(static_cast<size_t>(s.weight))[c], beta = operands.at(static_cast<size_t>(s.bias))[c];
    const T mean = operands.at(static_cast<size_t>(s.mean))[c], var = operands.at(static_cast<size_t>(s.var))[c];
    const T scale = gamma / std::sqrt(var + static_cast<T>(s.eps));
    const T shift = beta - scale * mean;
    T* d = dst.k + c * per_channel;
    if (s.src < 0) {
      d[c * dst.r->tap_count()] = scale;  // the identity's channel c, its one tap
      dst.b[c] = shift;
      continue;
    }
    const Reg<T> src = reg(p, l, base, s.src);
    const T* x = src.k + c * per_channel;
    for (int64_t i = 0; i < per_channel; ++i) d[i] = scale * x[i];
    dst.b[c] = shift + (src.b != nullptr ? scale * src.b[c] : T(0));
  }
}

}  // namespace

template <class T>
void fold_run_steps(const FoldProgram& program, const std::vector<const T*>& operands, T* registers) {
  const FoldLayout layout(program);
  std::fill(registers, registers + layout.elements, T(0));
  for (const FoldStep& s : program.steps) {
    switch (s.kind) {
      case FoldStepKind::compose_conv: compose_forward(program, layout, s, operands, registers); break;
      case FoldStepKind::accumulate: accumulate_forward(program, layout, s, registers); break;
      case FoldStepKind::batch_norm: batch_norm_forward(program, layout, s, operands, registers); break;
    }
  }
}

template <class T>
void fold_emit(const FoldProgram& program, const T* registers, T* weight, T* bias) {
  const FoldLayout layout(program);
  const Reg<T> r = reg(program, layout, const_cast<T*>(registers), program.result);
  const int64_t co_n = r.r->out_channels, per_group = r.r->in_channels / program.groups;
  const int64_t out_per_group = co_n / program.groups;
  const FoldExtent& k = program.kernel;
  const FoldExtent& f = program.first_tap;
  const FoldExtent& dl = program.dilation;
  int64_t i = 0;
  for (int64_t co = 0; co < co_n; ++co) {
    const int64_t g0 = co / out_per_group * per_group;
    for (int64_t j = 0; j < per_group; ++j)
      for (int64_t a = 0; a < k[0]; ++a)
        for (int64_t b = 0; b < k[1]; ++b)
          for (int64_t c = 0; c < k[2]; ++c)
            weight[i++] = r.k[r.at(co, g0 + j, f[0] + dl[0] * a, f[1] + dl[1] * b, f[2] + dl[2] * c)];
  }
  if (r.b != nullptr && bias != nullptr) std::copy(r.b, r.b + co_n, bias);
}

template <class T>
void fold_forward(const FoldProgram& program, const std::vector<const T*>& operands, T* registers, T* weight, T* bias) {
  fold_run_steps(program, operands, registers);
  fold_emit(program, registers, weight, bias);
}

template <class T>
void fold_backward(const FoldProgram& p, const std::vector<const T*>& operands, const T* registers, T* register_grads,
                   const T* weight_grad, const T* bias_grad, const std::vector<T*>& operand_grads) {
  if (!fold_has_adjoint(p)) throw std::logic_error("fold program: a batch norm step has no adjoint here");
  const FoldLayout l(p);
  std::fill(register_grads, register_grads + l.elements, T(0));
  for (size_t i = 0; i < p.operands.size(); ++i)
    std::fill(operand_grads.at(i), operand_grads.at(i) + p.operands[i].numel(), T(0));
  T* vals = const_cast<T*>(registers);  // read only
  // The cut's adjoint: scatter the weight's gradient back into the result register's.
  {
    const Reg<T> r = reg(p, l, register_grads, p.result);
    const int64_t co_n = r.r->out_channels, per_group = r.r->in_channels / p.groups, out_per_group = co_n / p.groups;
    const FoldExtent& k = p.kernel;
    const FoldExtent& f = p.first_tap;
    const FoldExtent& dl = p.dilation;
    int64_t i = 0;
    for (int64_t co = 0; co < co_n; ++co) {
      const int64_t g0 = co / out_per_group * per_group;
      for (int64_t j = 0; j < per_group; ++j)
        for (int64_t a = 0; a < k[0]; ++a)
          for (int64_t b = 0; b < k[1]; ++b)
            for (int64_t c = 0; c < k[2]; ++c)
              r.k[r.at(co, g0 + j, f[0] + dl[0] * a, f[1] + dl[1] * b, f[2] + dl[2] * c)] = weight_grad[i++];
    }
    if (r.b != nullptr && bias_grad != nullptr) std::copy(bias_grad, bias_grad + co_n, r.b);
  }
  for (auto it = p.steps.rbegin(); it != p.steps.rend(); ++it) {
    const FoldStep& s = *it;
    const Reg<T> gd = reg(p, l, register_grads, s.dst);
    if (s.kind == FoldStepKind::accumulate) {
      if (s.src < 0) continue;  // the identity has no parameters
      const Reg<T> gs = reg(p, l, register_grads, s.src);
      const FoldExtent& ts = gs.r->taps;
      const FoldExtent& sh = s.shift;
      const T scale = static_cast<T>(s.scale);
      for (int64_t c = 0; c < s.channels; ++c)
        for (int64_t c0 = 0; c0 < gs.r->in_channels; ++c0)
          for (int64_t a = 0; a < ts[0]; ++a)
            for (int64_t b = 0; b < ts[1]; ++b) {
              const T* d = &gd.k[gd.at(s.dst_channel + c, c0, a + sh[0], b + sh[1], sh[2])];
              T* x = &gs.k[gs.at(s.src_channel + c, c0, a, b, 0)];
              for (int64_t t = 0; t < ts[2]; ++t) x[t] += scale * d[t];
            }
      if (gs.b != nullptr)
        for (int64_t c = 0; c < s.channels; ++c) gs.b[s.src_channel + c] += scale * gd.b[s.dst_channel + c];
      continue;
    }
    // compose_conv
    const int64_t co_n = gd.r->out_channels, kq = volume(s.kernel);
    const int64_t src_channels = s.channels, per_group = src_channels / s.groups, out_per_group = co_n / s.groups;
    const T* w = operands.at(static_cast<size_t>(s.weight));
    T* dw = operand_grads.at(static_cast<size_t>(s.weight));
    if (s.bias >= 0 && gd.b != nullptr) {
      T* db = operand_grads.at(static_cast<size_t>(s.bias));
      for (int64_t c2 = 0; c2 < co_n; ++c2) db[c2] += gd.b[c2];
    }
    if (s.src < 0) {
      for (int64_t c2 = 0; c2 < co_n; ++c2) {
        const int64_t g0 = c2 / out_per_group * per_group;
        for (int64_t j = 0; j < per_group; ++j)
          for (int64_t q = 0; q < kq; ++q) {
            const FoldExtent o = conv_offset(s, q);
            dw[(c2 * per_group + j) * kq + q] += gd.k[gd.at(c2, s.src_channel + g0 + j, o[0], o[1], o[2])];
          }
      }
      continue;
    }
    const Reg<T> src = reg(p, l, vals, s.src);
    const Reg<T> gs = reg(p, l, register_grads, s.src);
    const int64_t ci_n = src.r->in_channels;
    const FoldExtent& ts = src.r->taps;
    // dW[c2][j][q] = sum over c0, t of dK_dst[c2][c0][tap_step*q + t] K_src[g0 + j][c0][t] (+ db_dst b_src)
#pragma omp parallel for schedule(static) if (co_n * per_group * kq * ci_n * volume(ts) > (1 << 16))
    for (int64_t c2 = 0; c2 < co_n; ++c2) {
      const int64_t g0 = c2 / out_per_group * per_group;
      for (int64_t j = 0; j < per_group; ++j)
        for (int64_t q = 0; q < kq; ++q) {
          T acc = dot_taps<T>(gd.k + gd.at(c2, 0, 0, 0, 0), gd.r->taps, src.k + src.at(g0 + j, 0, 0, 0, 0), ts, ci_n,
                              conv_offset(s, q));
          if (src.b != nullptr && gd.b != nullptr) acc += gd.b[c2] * src.b[g0 + j];
          dw[(c2 * per_group + j) * kq + q] += acc;
        }
    }
    // dK_src[c1][c0][t] += sum over the c2 of c1's group, q of dK_dst[c2][c0][tap_step*q + t] W[c2][c1 - g0][q]
#pragma omp parallel for schedule(static) if (co_n * per_group * kq * ci_n * volume(ts) > (1 << 16))
    for (int64_t c1 = 0; c1 < src_channels; ++c1) {
      const int64_t g = c1 / per_group, j = c1 % per_group;
      for (int64_t c2 = g * out_per_group; c2 < (g + 1) * out_per_group; ++c2)
        for (int64_t q = 0; q < kq; ++q) {
          const T wv = w[(c2 * per_group + j) * kq + q];
          gather_taps(gs.k + gs.at(c1, 0, 0, 0, 0), ts, gd.k + gd.at(c2, 0, 0, 0, 0), gd.r->taps, ci_n,
                      conv_offset(s, q), wv);
          if (gs.b != nullptr && gd.b != nullptr) gs.b[c1] += wv * gd.b[c2];
        }
    }
  }
}

#define CONVBENCH_FOLD_INSTANTIATE(T)                                                                                \
  template void fold_run_steps<T>(const FoldProgram&, const std::vector<const T*>&, T*);                             \
  template void fold_emit<T>(const FoldProgram&, const T*, T*, T*);                                                  \
  template void fold_forward<T>(const FoldProgram&, const std::vector<const T*>&, T*, T*, T*);                       \
  template void fold_backward<T>(const FoldProgram&, const std::vector<const T*>&, const T*, T*, const T*, const T*, \
                                 const std::vector<T*>&);
CONVBENCH_FOLD_INSTANTIATE(float)
CONVBENCH_FOLD_INSTANTIATE(double)
#undef CONVBENCH_FOLD_INSTANTIATE

}  // namespace convbench

namespace convbench {

FoldWorkspace fold_workspace(const FoldProgram& program, int64_t kernel_element_bytes, int64_t register_bytes,
                             bool backward, bool training) {
  auto aligned = [](int64_t b) { return (b + 255) / 256 * 256; };
  int64_t weight = kernel_element_bytes;
  for (int64_t s : program.weight_shape()) weight *= s;
  const int64_t bias = program.has_bias() ? program.out().out_channels * kernel_element_bytes : 0;
  FoldWorkspace w;
  w.kernel = (backward || !training ? aligned(weight) : 0) + aligned(bias);
  const int64_t regs = aligned(FoldLayout(program).elements * register_bytes);
  w.registers = register_bytes == 0 ? 0 : (backward ? 2 * regs : regs);
  return w;
}

}  // namespace convbench

// Max, average and global average pooling. Max and average pooling with zero-sized (never winning / zero-valued)
// padding, as PyTorch's max_pool and avg_pool with ceil_mode=False and count_include_pad=True (its defaults).
#include <cmath>
#include <limits>

#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

// Pooling works plane by plane: (n, c) planes of `in` spatial size in, `out` out.
struct PoolShape {
  int64_t planes = 0;
  Extent3 in{}, out{};
  Window window{};
  int64_t in_size = 0, out_size = 0;
};

PoolShape pool_shape(const TensorDesc& in, const TensorDesc& out, const PoolAttrs& a) {
  PoolShape s;
  s.planes = in.batch() * in.channels();
  s.in = spatial_extent(in);
  s.out = spatial_extent(out);
  s.window = Window{per_dim(a.kernel, 1), per_dim(a.stride, 1), per_dim(a.padding, 0), Extent3{1, 1, 1}};
  s.in_size = volume(s.in);
  s.out_size = volume(s.out);
  return s;
}

PoolShape pool_shape(const Graph& graph, const Op& op) {
  return pool_shape(graph.desc(op.inputs.at(0)), graph.desc(op.output), op.pool);
}

// For every output element, the flat position of its maximum within its input plane (PyTorch's
// index convention), and the maximum itself. Padding never wins; among equal values the first in
// window order wins; a NaN wins (the last NaN), as in PyTorch's CPU kernel.
void max_pool_argmax(const std::vector<double>& x, const PoolShape& s, std::vector<double>& y,
                     std::vector<int64_t>& index) {
  y.assign(static_cast<size_t>(s.planes * s.out_size), 0.0);
  index.assign(y.size(), 0);
  std::vector<WindowTap> taps;
  for (int64_t o = 0; o < s.out_size; ++o) {
    collect_taps(TapFrom::strided, s.window, unflatten(o, s.out), s.in, taps);
    if (taps.empty()) throw std::invalid_argument("reference backend: max_pool window lies entirely in the padding");
    for (int64_t p = 0; p < s.planes; ++p) {
      const double* xp = &x[p * s.in_size];
      double best = -std::numeric_limits<double>::infinity();
      int64_t best_at = taps.front().source;
      for (const WindowTap& t : taps) {
        const double v = xp[t.source];
        if (v > best || std::isnan(v)) {
          best = v;
          best_at = t.source;
        }
      }
      y[p * s.out_size + o] = best;
      index[p * s.out_size + o] = best_at;
    }
  }
}

}  // namespace

void max_pool_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "max_pool", "input");
  Tensor& yt = required(call.output, "max_pool", "output");
  const PoolShape s = pool_shape(xt.desc, yt.desc, call.op.pool);
  std::vector<double> y;
  std::vector<int64_t> index;
  max_pool_argmax(load(xt), s, y, index);
  store(yt, y);
  if (Tensor* saved_index = optional_at(call.aux, 0))  // training only
    store(*saved_index, std::vector<double>(index.begin(), index.end()));
}

// Scatters g to the argmax of each window: from the saved indices, or (without them) from the
// saved input, which gives the same positions.
void max_pool_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const PoolShape s = pool_shape(call.graph, call.op);
  std::vector<int64_t> index;
  if (const Tensor* saved_index = optional_at(call.aux, 0)) {
    const std::vector<double> v = load(*saved_index);
    index.assign(v.begin(), v.end());
  } else {
    std::vector<double> unused;
    max_pool_argmax(load(required(optional_at(call.inputs, 0), "max_pool", "saved input")), s, unused, index);
  }
  const std::vector<double> g = load(required(call.grad_output, "max_pool", "grad_output"));
  std::vector<double> gx(static_cast<size_t>(grad_x->desc.numel()), 0.0);
  for (int64_t p = 0; p < s.planes; ++p)
    for (int64_t o = 0; o < s.out_size; ++o) {
      const int64_t at = index[p * s.out_size + o];
      if (at < 0 || at >= s.in_size) throw std::invalid_argument("reference backend: max_pool index out of range");
      gx[p * s.in_size + at] += g[p * s.out_size + o];
    }
  store(*grad_x, gx);
}

// count_include_pad: every window divides by the full kernel volume. Without ceil_mode a window
// never reaches past the padding, so that is PyTorch's divisor for every window.
void avg_pool_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "avg_pool", "input");
  Tensor& yt = required(call.output, "avg_pool", "output");
  const PoolShape s = pool_shape(xt.desc, yt.desc, call.op.pool);
  const double divisor = static_cast<double>(volume(s.window.kernel));
  const std::vector<double> x = load(xt);
  std::vector<double> y(static_cast<size_t>(yt.desc.numel()));
  std::vector<WindowTap> taps;
  for (int64_t o = 0; o < s.out_size; ++o) {
    collect_taps(TapFrom::strided, s.window, unflatten(o, s.out), s.in, taps);
    for (int64_t p = 0; p < s.planes; ++p) {
      double sum = 0.0;
      for (const WindowTap& t : taps) sum += x[p * s.in_size + t.source];
      y[p * s.out_size + o] = sum / divisor;
    }
  }
  store(yt, y);
}

// Each input position receives g / kernel volume from every window that covers it.
void avg_pool_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const PoolShape s = pool_shape(call.graph, call.op);
  const double divisor = static_cast<double>(volume(s.window.kernel));
  const std::vector<double> g = load(required(call.grad_output, "avg_pool", "grad_output"));
  std::vector<double> gx(static_cast<size_t>(grad_x->desc.numel()));
  std::vector<WindowTap> taps;
  for (int64_t i = 0; i < s.in_size; ++i) {
    collect_taps(TapFrom::dense, s.window, unflatten(i, s.in), s.out, taps);
    for (int64_t p = 0; p < s.planes; ++p) {
      double sum = 0.0;
      for (const WindowTap& t : taps) sum += g[p * s.out_size + t.source];
      gx[p * s.in_size + i] = sum / divisor;
    }
  }
  store(*grad_x, gx);
}

// global_avg_pool: the mean of each (n, c) plane; backward spreads g / S over the plane.
void global_avg_pool_forward(const ForwardCall& call) {
  const Tensor& xt = required(optional_at(call.inputs, 0), "global_avg_pool", "input");
  const int64_t planes = xt.desc.batch() * xt.desc.channels(), spatial = xt.desc.spatial_size();
  const std::vector<double> x = load(xt);
  std::vector<double> y(static_cast<size_t>(planes), 0.0);
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    for (int64_t s = 0; s < spatial; ++s) sum += x[p * spatial + s];
    y[static_cast<size_t>(p)] = sum / static_cast<double>(spatial);
  }
  store(required(call.output, "global_avg_pool", "output"), y);
}

void global_avg_pool_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  const int64_t spatial = grad_x->desc.spatial_size();
  const std::vector<double> g = load(required(call.grad_output, "global_avg_pool", "grad_output"));
  std::vector<double> gx(static_cast<size_t>(grad_x->desc.numel()));
  for (size_t i = 0; i < gx.size(); ++i) gx[i] = g[i / static_cast<size_t>(spatial)] / static_cast<double>(spatial);
  store(*grad_x, gx);
}

void register_pool_kernels(KernelTable& table) {
  table.add(OpKind::max_pool, {max_pool_forward, max_pool_backward});
  table.add(OpKind::avg_pool, {avg_pool_forward, avg_pool_backward});
  table.add(OpKind::global_avg_pool, {global_avg_pool_forward, global_avg_pool_backward});
}

}  // namespace convbench::reference

// Test support for backend op tests: runs the last op of a small graph directly on a backend (no
// executor), with host-side input, parameter and buffer values that a test can change between
// runs, and the catalogue of op cases the reference backend tests sweep over.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/autograd_rules.hpp"
#include "ops/graph_builder.hpp"
#include "runtime/backend.hpp"
#include "runtime/host_io.hpp"
#include "transforms/fold_graph.hpp"

namespace convbench::reftest {

inline std::vector<double> random_values(size_t count, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(count);
  for (double& x : v) x = dist(rng);
  return v;
}

// How far from zero the inputs of an op are drawn: (-1, 1), or wider for the activations whose
// pieces lie further out (hardswish and hardsigmoid change at -3 and 3, relu6 at 0 and 6), so that
// every case crosses each piece. Every backend's test draws its inputs times this.
inline double input_scale(const Op& op) {
  switch (op.kind) {
    case OpKind::hardswish:
    case OpKind::hardsigmoid:
    case OpKind::relu6: return 8.0;
    case OpKind::gelu: return 4.0;
    default: return 1.0;
  }
}

// `values` rounded to what a tensor of `dtype` can hold; for tf32, to what a TF32 operand can
// hold (so that the reference's operand rounding leaves them as they are).
inline std::vector<double> quantize(const std::vector<double>& values, DType dtype) {
  std::vector<double> out(values.size());
  std::vector<unsigned char> cell(8);
  for (size_t i = 0; i < values.size(); ++i) {
    store_element(cell.data(), 0, dtype, values[i]);
    out[i] = load_element(cell.data(), 0, dtype);
    if (dtype == DType::tf32) out[i] = round_to_tf32(static_cast<float>(out[i]));
  }
  return out;
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// batch_norm_act's backward divides by its weight (gamma) to undo the affine, so a weight near 0
// amplifies rounding (Inplace-ABN's caveat): every test that draws its parameters at random keeps
// that weight's magnitude in [0.5, 1] (sign kept). Other ops' parameters are left as drawn.
inline void keep_weight_away_from_zero(const Op& op, std::vector<std::vector<double>>& params) {
  if (op.kind != OpKind::batch_norm_act || params.empty()) return;
  for (double& w : params[0]) w = std::copysign(0.5 + 0.5 * std::abs(w), w);
}

// Fills a floating-point tensor with NaN, so that any element a kernel fails to write (or adds
// to instead of overwriting) shows up as NaN in the result.
inline void poison(Backend& backend, Tensor& t) {
  if (t.desc.dtype == DType::uint8 || t.desc.dtype == DType::int64) return;
  upload(backend, t,
         std::vector<double>(static_cast<size_t>(t.desc.numel()), std::numeric_limits<double>::quiet_NaN()));
}

// Gradients one backward call produced (logical order).
struct OpGradients {
  std::vector<std::optional<std::vector<double>>> inputs;  // nullopt where grad_flow is alias
  std::vector<std::vector<double>> params;
};

// Runs the LAST op of `graph` on `backend`. Inputs, parameters and buffers start as seeded random
// values (buffers positive, as running variances must be) and are uploaded before every forward.
class OpHarness {
 public:
  OpHarness(Backend& backend, Graph graph, uint64_t seed = 1) : backend_(backend), graph_(std::move(graph)) {
    const Op& o = op();
    uint64_t s = seed;
    for (int v : o.inputs) {
      const TensorDesc& d = graph_.desc(v);
      inputs.push_back(random_values(static_cast<size_t>(d.numel()), ++s, -input_scale(o), input_scale(o)));
      input_tensors_.push_back(make_tensor(backend_.allocator(), d, MemoryCategory::inputs));
    }
    for (int p : o.params) {
      const TensorDesc& d = graph_.params[static_cast<size_t>(p)].desc;
      params.push_back(random_values(static_cast<size_t>(d.numel()), ++s));
      param_tensors_.push_back(make_tensor(backend_.allocator(), d, MemoryCategory::parameters));
    }
    keep_weight_away_from_zero(o, params);
    for (int b : o.buffers) {
      const TensorDesc& d = graph_.buffers[static_cast<size_t>(b)].desc;
      buffers.push_back(random_values(static_cast<size_t>(d.numel()), ++s, 0.5, 1.5));
      buffer_tensors_.push_back(make_tensor(backend_.allocator(), d, MemoryCategory::buffers));
    }
  }

  const Graph& graph() const { return graph_; }
  const Op& op() const { return graph_.ops.back(); }
  const TensorDesc& output_desc() const { return graph_.desc(op().output); }

  // Runs forward; returns the output in logical order. Keeps the output and aux for backward.
  std::vector<double> forward(bool training) {
    const Op& o = op();
    for (size_t i = 0; i < inputs.size(); ++i) upload(backend_, input_tensors_[i], inputs[i]);
    for (size_t i = 0; i < params.size(); ++i) upload(backend_, param_tensors_[i], params[i]);
    for (size_t i = 0; i < buffers.size(); ++i) upload(backend_, buffer_tensors_[i], buffers[i]);
    output_ = make_tensor(backend_.allocator(), output_desc(), MemoryCategory::temporaries);
    poison(backend_, output_);
    aux_.clear();
    if (training) {
      for (const TensorDesc& d : aux_tensors(graph_, o)) {
        aux_.push_back(make_tensor(backend_.allocator(), d, MemoryCategory::saved));
        poison(backend_, aux_.back());
      }
    }
    ForwardCall call{.graph = graph_, .op = o, .output = &output_, .training = training, .seed = dropout_seed};
    for (const Tensor& t : input_tensors_) call.inputs.push_back(&t);
    for (const Tensor& t : param_tensors_) call.params.push_back(&t);
    for (Tensor& t : buffer_tensors_) call.buffers.push_back(&t);
    for (Tensor& t : aux_) call.aux.push_back(&t);
    const Tensor ws = workspace(Phase::forward, training);
    call.workspace = ws.raw();
    backend_.forward(call);
    return download(backend_, output_);
  }

  // Replaces the output forward left (what backward reads when the op saves its output), e.g.
  // with a lower-precision run's rounded one, so two runs' backward read the same saved values.
  void set_saved_output(const std::vector<double>& values) { upload(backend_, output_, values); }

  // Runs backward after a training forward, passing only what saved_tensors() says the op saves
  // (nullptr for the rest) and gradient tensors only where grad_flow() computes one.
  OpGradients backward(const std::vector<double>& grad_output) {
    const Op& o = op();
    // Every input's gradient is computed here, so the op saves what it keeps when all need one.
    const SavedTensors saved = saved_tensors(o, std::vector<bool>(o.inputs.size(), true));
    BackwardCall call{.graph = graph_, .op = o, .output = saved.output ? &output_ : nullptr};
    call.inputs.assign(o.inputs.size(), nullptr);
    for (int pos : saved.inputs) call.inputs[static_cast<size_t>(pos)] = &input_tensors_[static_cast<size_t>(pos)];
    for (const Tensor& t : aux_) call.aux.push_back(&t);
    for (const Tensor& t : param_tensors_) call.params.push_back(&t);
    for (const Tensor& t : buffer_tensors_) call.buffers.push_back(&t);  // a frozen conv's weight
    Tensor g = make_tensor(backend_.allocator(), output_desc(), MemoryCategory::inputs);
    upload(backend_, g, grad_output);
    call.grad_output = &g;

    std::vector<std::optional<Tensor>> grad_inputs(o.inputs.size());
    for (size_t pos = 0; pos < o.inputs.size(); ++pos) {
      if (grad_flow(o, static_cast<int>(pos)) == GradFlow::alias) {
        call.grad_inputs.push_back(nullptr);
        continue;
      }
      grad_inputs[pos] = make_tensor(backend_.allocator(), graph_.desc(o.inputs[pos]), MemoryCategory::temporaries);
      poison(backend_, *grad_inputs[pos]);
      call.grad_inputs.push_back(&*grad_inputs[pos]);
    }
    std::vector<Tensor> grad_params;
    for (int p : o.params) {
      grad_params.push_back(
          make_tensor(backend_.allocator(), graph_.params[static_cast<size_t>(p)].desc, MemoryCategory::gradients));
      poison(backend_, grad_params.back());
    }
    for (Tensor& t : grad_params) call.grad_params.push_back(&t);
    const Tensor ws = workspace(Phase::backward, true);
    call.workspace = ws.raw();
    backend_.backward(call);

    OpGradients out;
    for (auto& t : grad_inputs) out.inputs.push_back(t ? std::optional(download(backend_, *t)) : std::nullopt);
    for (const Tensor& t : grad_params) out.params.push_back(download(backend_, t));
    return out;
  }

  std::vector<double> buffer_after_forward(size_t i) { return download(backend_, buffer_tensors_.at(i)); }
  std::vector<double> aux_after_forward(size_t i) { return download(backend_, aux_.at(i)); }
  const Tensor& aux_tensor(size_t i) const { return aux_.at(i); }

  // The scratch the backend asks for (a folded_conv keeps its kernel and registers there), as the
  // executor allocates it; an empty tensor when it asks for none.
  Tensor workspace(Phase phase, bool training) {
    const int64_t bytes = backend_.workspace_bytes(graph_, op(), phase, training);
    if (bytes <= 0) return Tensor{};
    return make_tensor(backend_.allocator(), TensorDesc{{bytes}, DType::uint8, Layout::channels_first},
                       MemoryCategory::workspace);
  }

  // Host values (logical order), uploaded before every forward.
  std::vector<std::vector<double>> inputs, params, buffers;
  uint64_t dropout_seed = 0x5eed;

 private:
  Backend& backend_;
  Graph graph_;
  std::vector<Tensor> input_tensors_, param_tensors_, buffer_tensors_, aux_;
  Tensor output_;
};

// ---- the op cases ------------------------------------------------------------------------------

inline ConvAttrs conv_attrs(int64_t out_channels, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                            std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups, bool bias,
                            std::vector<int64_t> output_padding = {}) {
  ConvAttrs a;
  a.out_channels = out_channels;
  a.kernel = std::move(kernel);
  a.stride = std::move(stride);
  a.padding = std::move(padding);
  a.dilation = std::move(dilation);
  a.groups = groups;
  a.bias = bias;
  a.output_padding = std::move(output_padding);
  return a;
}

inline PoolAttrs pool_attrs(std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> padding) {
  return PoolAttrs{std::move(kernel), std::move(stride), std::move(padding)};
}

// A small graph whose last op is the op under test (earlier ops only give it inputs of the
// right shapes; the harness feeds it its own values).
struct OpCase {
  std::string name;
  std::vector<int64_t> input_shape;
  std::function<int(GraphBuilder&, int)> build;  // (builder, block input) -> graph output
};

// GoogleTest prints parameters in test names; the name is what identifies a case.
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

inline Graph build_case(const OpCase& c, DType dtype, Layout layout) {
  GraphBuilder b(c.name, TensorDesc{c.input_shape, dtype, layout});
  const int out = c.build(b, b.input());
  return b.finish(out);
}

// Every op kind, 2-D and 3-D, with the awkward attribute combinations (groups, depthwise, stride,
// dilation, padding, output_padding, asymmetric kernels) that a backend can get wrong.
inline std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  auto add = [&](std::string name, std::vector<int64_t> shape, std::function<int(GraphBuilder&, int)> build) {
    cases.push_back({std::move(name), std::move(shape), std::move(build)});
  };
  add("conv2d", {2, 3, 5, 5}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true));
  });
  add("conv2d_grouped_strided_dilated", {2, 4, 7, 6}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(6, {3, 2}, {2, 1}, {1, 0}, {2, 1}, 2, true));
  });
  add("conv2d_depthwise", {1, 4, 5, 5}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(8, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 4, false));
  });
  // Depthwise (groups == input channels): the shapes the CUDA backend's own kernels unroll (3x3x3,
  // 5x5) and a generic one with a channel multiplier, stride, padding and dilation per dim.
  add("conv3d_depthwise", {2, 3, 4, 5, 6}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(3, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 3, true));
  });
  add("conv3d_depthwise_multiplier_strided_dilated", {1, 2, 5, 7, 6}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(4, {2, 3, 3}, {1, 2, 1}, {1, 0, 2}, {2, 1, 2}, 2, true));
  });
  add("conv2d_depthwise_5x5", {2, 3, 7, 6}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(3, {5, 5}, {1, 1}, {2, 2}, {1, 1}, 3, true));
  });
  add("conv3d_grouped_dilated", {1, 4, 4, 5, 3}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(6, {3, 3, 2}, {1, 2, 1}, {1, 1, 0}, {2, 1, 1}, 2, true));
  });
  add("conv3d_pointwise", {2, 3, 2, 3, 2}, [](GraphBuilder& b, int x) {
    return b.conv("conv", x, conv_attrs(2, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, true));
  });
  add("conv_transpose2d_grouped", {2, 4, 3, 3}, [](GraphBuilder& b, int x) {
    return b.conv_transpose("up", x, conv_attrs(6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 2, true, {1, 1}));
  });
  add("conv_transpose3d_dilated", {1, 2, 2, 3, 2}, [](GraphBuilder& b, int x) {
    return b.conv_transpose("up", x, conv_attrs(4, {2, 3, 2}, {2, 1, 2}, {0, 1, 1}, {1, 2, 1}, 1, true, {1, 1, 0}));
  });
  add("batch_norm2d", {3, 4, 3, 3}, [](GraphBuilder& b, int x) { return b.batch_norm("bn", x, 1e-5, 0.1); });
  add("batch_norm3d", {2, 3, 2, 3, 2}, [](GraphBuilder& b, int x) { return b.batch_norm("bn", x, 1e-3, 0.3); });
  // Batch norm and leaky ReLU as one op (Inplace-ABN); its backward reads only its output.
  add("batch_norm_act2d", {3, 4, 3, 3}, [](GraphBuilder& b, int x) { return b.batch_norm_act("abn", x, 0.1); });
  add("batch_norm_act3d", {2, 3, 2, 3, 2},
      [](GraphBuilder& b, int x) { return b.batch_norm_act("abn", x, 0.3, 1e-3, 0.3); });
  add("group_norm2d", {2, 6, 3, 3}, [](GraphBuilder& b, int x) { return b.group_norm("gn", x, 3, 1e-5); });
  add("group_norm3d", {2, 4, 2, 2, 3}, [](GraphBuilder& b, int x) { return b.group_norm("gn", x, 2, 1e-4); });
  // Layer norm over channels at each position (ConvNeXt's LayerNorm2d): a channel count that is no
  // multiple of a vector, and positions past one CPU tile in 2-D.
  add("layer_norm2d", {2, 5, 17, 16}, [](GraphBuilder& b, int x) { return b.layer_norm("ln", x, 1e-6); });
  add("layer_norm3d", {2, 3, 2, 3, 2}, [](GraphBuilder& b, int x) { return b.layer_norm("ln", x, 1e-5); });
  // A per-channel learned scale (ConvNeXt's layer scale).
  add("layer_scale2d", {2, 3, 3, 4}, [](GraphBuilder& b, int x) { return b.layer_scale("ls", x); });
  add("layer_scale3d", {2, 4, 2, 2, 3}, [](GraphBuilder& b, int x) { return b.layer_scale("ls", x); });
  // ShuffleNet's channel shuffle: 2 groups as ShuffleNetV2, 3 groups of 2 (a non-square regrouping).
  add("channel_shuffle2d", {2, 6, 3, 2}, [](GraphBuilder& b, int x) { return b.channel_shuffle("shuffle", x, 2); });
  add("channel_shuffle3d", {1, 6, 2, 2, 3}, [](GraphBuilder& b, int x) { return b.channel_shuffle("shuffle", x, 3); });
  add("relu2d", {2, 3, 4, 4}, [](GraphBuilder& b, int x) { return b.relu("relu", x); });
  add("leaky_relu3d", {1, 2, 3, 3, 3}, [](GraphBuilder& b, int x) { return b.leaky_relu("lrelu", x, 0.2); });
  add("dropout2d", {2, 3, 4, 4}, [](GraphBuilder& b, int x) { return b.dropout("drop", x, 0.3); });
  add("dropout3d", {1, 2, 3, 3, 2}, [](GraphBuilder& b, int x) { return b.dropout("drop", x, 0.5); });
  // Channels dropped whole: shapes with several (n, c) channels, some kept and some dropped.
  add("channel_dropout2d", {3, 4, 3, 2}, [](GraphBuilder& b, int x) { return b.channel_dropout("cdrop", x, 0.3); });
  add("channel_dropout3d", {2, 3, 2, 2, 3}, [](GraphBuilder& b, int x) { return b.channel_dropout("cdrop", x, 0.5); });
  // Samples dropped whole: enough samples that some are kept and some dropped.
  add("drop_path2d", {6, 3, 2, 3}, [](GraphBuilder& b, int x) { return b.drop_path("dpath", x, 0.4); });
  add("drop_path3d", {4, 2, 2, 2, 3}, [](GraphBuilder& b, int x) { return b.drop_path("dpath", x, 0.5); });
  add("add2d", {2, 3, 3, 4}, [](GraphBuilder& b, int x) { return b.add("add", x, x); });
  add("sub3d", {1, 3, 2, 3, 2}, [](GraphBuilder& b, int x) { return b.sub("sub", x, x); });
  add("concat3_2d", {2, 2, 3, 3}, [](GraphBuilder& b, int x) {
    const int a = b.conv("a", x, conv_attrs(3, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false));
    const int c = b.conv("c", x, conv_attrs(1, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false));
    return b.concat("cat", {a, x, c});
  });
  add("concat3_3d", {1, 2, 2, 2, 3}, [](GraphBuilder& b, int x) {
    const int a = b.conv("a", x, conv_attrs(1, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, false));
    return b.concat("cat", {x, a, x});
  });
  add("max_pool2d_padded", {2, 2, 5, 6}, [](GraphBuilder& b, int x) {
    return b.max_pool("pool", x, pool_attrs({3, 3}, {2, 2}, {1, 1}));
  });
  add("max_pool3d_padded", {1, 2, 4, 5, 3}, [](GraphBuilder& b, int x) {
    return b.max_pool("pool", x, pool_attrs({2, 3, 2}, {2, 2, 1}, {1, 1, 0}));
  });
  add("avg_pool2d_padded", {2, 2, 5, 6}, [](GraphBuilder& b, int x) {
    return b.avg_pool("pool", x, pool_attrs({3, 3}, {2, 2}, {1, 1}));
  });
  add("avg_pool3d_padded", {1, 2, 4, 5, 3}, [](GraphBuilder& b, int x) {
    return b.avg_pool("pool", x, pool_attrs({2, 3, 2}, {2, 2, 1}, {1, 1, 0}));
  });
  add("global_avg_pool2d", {2, 3, 4, 5}, [](GraphBuilder& b, int x) { return b.global_avg_pool("gap", x); });
  add("global_avg_pool3d", {2, 2, 3, 2, 3}, [](GraphBuilder& b, int x) { return b.global_avg_pool("gap", x); });
  add("upsample2d", {1, 2, 3, 2}, [](GraphBuilder& b, int x) { return b.upsample("up", x, 2); });
  add("upsample3d", {1, 2, 2, 2, 3}, [](GraphBuilder& b, int x) { return b.upsample("up", x, 3); });
  // Linear: by a scale, to sizes that are no multiple of the input (up and down), with and
  // without align_corners, and to the input's own size (an exact copy).
  add("upsample_linear2d", {2, 2, 3, 4}, [](GraphBuilder& b, int x) { return b.upsample_linear("up", x, 2); });
  add("upsample_linear2d_size_align_corners", {1, 3, 3, 4}, [](GraphBuilder& b, int x) {
    return b.upsample_linear("up", x, 2, true, {5, 3});
  });
  add("upsample_linear2d_size", {1, 2, 4, 3}, [](GraphBuilder& b, int x) {
    return b.upsample_linear("up", x, 2, false, {7, 2});
  });
  add("upsample_linear2d_same_size", {1, 2, 3, 3}, [](GraphBuilder& b, int x) {
    return b.upsample_linear("up", x, 2, false, {3, 3});
  });
  add("upsample_linear3d", {1, 2, 2, 3, 2}, [](GraphBuilder& b, int x) { return b.upsample_linear("up", x, 2); });
  add("upsample_linear3d_size_align_corners", {1, 2, 2, 3, 4}, [](GraphBuilder& b, int x) {
    return b.upsample_linear("up", x, 2, true, {3, 5, 2});
  });
  // To the other layout of the case's (both ways, as every case runs in both layouts); channel and
  // spatial counts that are not multiples of a tile catch a blocked transpose's edges.
  add("convert_layout2d", {2, 34, 5, 7}, [](GraphBuilder& b, int x) { return b.convert_layout("convert", x); });
  add("convert_layout3d", {1, 3, 2, 5, 3}, [](GraphBuilder& b, int x) { return b.convert_layout("convert", x); });
  // Ops without a convenience method are added by kind (GraphBuilder::add(Op)).
  auto unary = [](OpKind kind, const char* name) {
    return [kind, name](GraphBuilder& b, int x) {
      Op op;
      op.kind = kind;
      op.name = name;
      op.inputs = {x};
      return b.add(std::move(op));
    };
  };
  add("sigmoid2d", {2, 3, 4, 4}, unary(OpKind::sigmoid, "sigmoid"));
  add("sigmoid3d", {1, 2, 3, 3, 2}, unary(OpKind::sigmoid, "sigmoid"));
  // The activations of today's efficient blocks (inputs drawn wide enough to cross every piece:
  // input_scale above).
  add("silu2d", {2, 3, 4, 4}, unary(OpKind::silu, "silu"));
  add("silu3d", {1, 2, 3, 3, 2}, unary(OpKind::silu, "silu"));
  add("hardswish2d", {2, 3, 4, 4}, unary(OpKind::hardswish, "hardswish"));
  add("hardswish3d", {1, 2, 3, 3, 2}, unary(OpKind::hardswish, "hardswish"));
  add("hardsigmoid2d", {2, 3, 4, 4}, unary(OpKind::hardsigmoid, "hardsigmoid"));
  add("relu6_2d", {2, 3, 4, 4}, unary(OpKind::relu6, "relu6"));
  add("relu6_3d", {1, 2, 3, 3, 2}, unary(OpKind::relu6, "relu6"));
  add("gelu2d", {2, 3, 4, 4}, unary(OpKind::gelu, "gelu"));
  add("gelu3d", {1, 2, 3, 3, 2}, unary(OpKind::gelu, "gelu"));
  add("gelu_tanh2d", {2, 3, 4, 4}, [](GraphBuilder& b, int x) {
    Op op;
    op.kind = OpKind::gelu;
    op.name = "gelu";
    op.inputs = {x};
    op.gelu_approximate = GeluApproximation::tanh;
    return b.add(std::move(op));
  });
  // linear reads (N, C, 1, ..., 1): a global_avg_pool gives the case that input (the harness feeds
  // the linear op its own values).
  add("linear2d", {3, 5, 2, 2}, [](GraphBuilder& b, int x) { return b.linear("fc", b.global_avg_pool("gap", x), 4); });
  add("linear3d_no_bias", {2, 3, 1, 2, 2},
      [](GraphBuilder& b, int x) { return b.linear("fc", b.global_avg_pool("gap", x), 6, false); });
  auto binary = [](OpKind kind, const char* name, int a, int b, GraphBuilder& builder) {
    Op op;
    op.kind = kind;
    op.name = name;
    op.inputs = {a, b};
    return builder.add(std::move(op));
  };
  // mul: operands of one shape, and a per-channel operand broadcast over space (an average pool
  // over the whole space gives it its (N, C, 1, ...) shape; the harness feeds its own values).
  add("mul2d", {2, 3, 3, 4}, [binary](GraphBuilder& b, int x) {
    const int a = b.conv("a", x, conv_attrs(3, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false));
    return binary(OpKind::mul, "mul", a, x, b);
  });
  add("mul2d_broadcast", {2, 3, 4, 5}, [binary](GraphBuilder& b, int x) {
    const int s = b.avg_pool("squeeze", x, pool_attrs({4, 5}, {4, 5}, {0, 0}));
    return binary(OpKind::mul, "mul", x, s, b);
  });
  add("mul3d_broadcast", {2, 2, 3, 2, 3}, [binary](GraphBuilder& b, int x) {
    const int s = b.avg_pool("squeeze", x, pool_attrs({3, 2, 3}, {3, 2, 3}, {0, 0, 0}));
    return binary(OpKind::mul, "mul", x, s, b);
  });
  // slice along channels, at the start and inside (backward zeroes the other channels).
  auto slice = [](int64_t start, int64_t length) {
    return [start, length](GraphBuilder& b, int x) {
      Op op;
      op.kind = OpKind::slice;
      op.name = "slice";
      op.inputs = {x};
      op.slice = {start, length};
      return b.add(std::move(op));
    };
  };
  add("slice2d", {2, 5, 3, 3}, slice(1, 3));
  add("slice2d_head", {1, 3, 2, 5}, slice(0, 1));
  add("slice3d", {1, 4, 2, 3, 2}, slice(2, 2));
  // space_to_depth in both channel orders, non-square blocks of positions, 3-D too; and its
  // inverse depth_to_space (pixel_shuffle, ONNX's DepthToSpace) alike.
  auto block_permutation = [](OpKind kind, int64_t block_size, SpaceToDepthOrder order) {
    return [kind, block_size, order](GraphBuilder& b, int x) {
      Op op;
      op.kind = kind;
      op.name = kind == OpKind::space_to_depth ? "s2d" : "d2s";
      op.inputs = {x};
      op.space_to_depth = {block_size, order};
      return b.add(std::move(op));
    };
  };
  auto space_to_depth = [&](int64_t block_size, SpaceToDepthOrder order) {
    return block_permutation(OpKind::space_to_depth, block_size, order);
  };
  auto depth_to_space = [&](int64_t block_size, SpaceToDepthOrder order) {
    return block_permutation(OpKind::depth_to_space, block_size, order);
  };
  add("space_to_depth2d", {2, 3, 4, 6}, space_to_depth(2, SpaceToDepthOrder::channel_major));
  add("space_to_depth2d_block_major", {1, 2, 6, 3}, space_to_depth(3, SpaceToDepthOrder::block_major));
  add("space_to_depth3d", {1, 2, 4, 2, 4}, space_to_depth(2, SpaceToDepthOrder::channel_major));
  add("space_to_depth3d_block_major", {2, 3, 2, 4, 2}, space_to_depth(2, SpaceToDepthOrder::block_major));
  add("depth_to_space2d", {2, 12, 2, 3}, depth_to_space(2, SpaceToDepthOrder::channel_major));
  add("depth_to_space2d_block_major", {1, 18, 3, 2}, depth_to_space(3, SpaceToDepthOrder::block_major));
  add("depth_to_space3d", {1, 16, 2, 1, 2}, depth_to_space(2, SpaceToDepthOrder::channel_major));
  add("depth_to_space3d_block_major", {2, 8, 1, 2, 1}, depth_to_space(2, SpaceToDepthOrder::block_major));
  // Frozen (TResNet's anti-alias blur): the weight and bias are buffers, backward computes only
  // the input's gradient.
  add("conv2d_frozen_depthwise", {2, 3, 5, 6}, [](GraphBuilder& b, int x) {
    ConvAttrs a = conv_attrs(3, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 3, true);
    a.frozen = true;
    a.blur_init = true;
    return b.conv("blur", x, a);
  });
  add("conv3d_frozen", {1, 2, 3, 4, 3}, [](GraphBuilder& b, int x) {
    ConvAttrs a = conv_attrs(4, {2, 3, 2}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, 1, false);
    a.frozen = true;
    return b.conv("frozen", x, a);
  });
  // folded_conv (fold: online): a small linear graph folded, its one folded_conv op under test
  // with the source's weights as its parameters: seed 002's SubtractedConv (stride 2: dilation 2
  // in the folded kernel), a RepVGG-like block without batch norm (3x3 + 1x1 + identity, biases),
  // and branches on channel slices (a grouped folded kernel), in 3-D.
  auto folded = [](std::function<int(GraphBuilder&, int)> source) {
    return [source](GraphBuilder& b, int x) {
      GraphBuilder s("source", b.desc(x));
      const Graph g = s.finish(source(s, s.input()));
      Op op = fold_graph(g, {FoldMode::online, true}).graph.ops.at(0);
      op.inputs = {x};
      op.params.clear();
      op.output = -1;
      return b.add(std::move(op));
    };
  };
  add("folded_subtracted2d", {2, 4, 7, 6}, folded([](GraphBuilder& b, int x) {
        const int p = b.conv("p", x, conv_attrs(3, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, false));
        const int depth = b.conv("depth", p, conv_attrs(3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 3, false));
        const int low = b.conv("low_pass", p, conv_attrs(3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false));
        return b.concat("x", {b.sub("d", depth, p), low});
      }));
  add("folded_repvgg2d", {2, 3, 5, 6}, folded([](GraphBuilder& b, int x) {
        const int a = b.conv("dense", x, conv_attrs(3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true));
        const int c = b.conv("pointwise", x, conv_attrs(3, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true));
        return b.add("sum2", b.add("sum", a, c), x);
      }));
  add("folded_branches3d", {1, 4, 3, 4, 3}, folded([](GraphBuilder& b, int x) {
        std::vector<int> outs;
        for (int i = 0; i < 2; ++i) {
          Op s;
          s.kind = OpKind::slice;
          s.name = "slice" + std::to_string(i);
          s.inputs = {x};
          s.slice = {2 * i, 2};
          const int part = b.add(std::move(s));
          outs.push_back(b.conv("branch" + std::to_string(i), part,
                                conv_attrs(3, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, true)));
        }
        return b.concat("cat", outs);
      }));
  return cases;
}

// The catalogue's case named `name` (tests pick cases by name: the catalogue grows in the middle).
inline OpCase op_case(const std::string& name) {
  for (OpCase& c : op_cases())
    if (c.name == name) return c;
  throw std::invalid_argument("no op case named " + name);
}

}  // namespace convbench::reftest

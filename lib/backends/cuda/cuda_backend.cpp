#include "backends/cuda/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/nvtx_range.hpp"
#include "kernels/kernels.hpp"
#include "ops/autograd_rules.hpp"

namespace convbench::cuda {
namespace {

// cuDNN's legacy API describes tensors with int dims and strides, and the kernels index with
// int: no tensor may hold more elements than an int counts.
constexpr int64_t kMaxElements = std::numeric_limits<int>::max();

bool float_storage(DType d) {
  return d == DType::float32 || d == DType::tf32 || d == DType::float16 || d == DType::bfloat16;
}

int element_count(const TensorDesc& d) {
  if (d.numel() > kMaxElements)
    throw std::invalid_argument("cuda backend: tensor " + d.shape_string() + " has more than 2^31-1 elements");
  return static_cast<int>(d.numel());
}

kernels::ActShape act_shape(const TensorDesc& d) {
  element_count(d);
  return {static_cast<int>(d.batch()), static_cast<int>(d.channels()), static_cast<int>(d.spatial_size()),
          d.layout == Layout::channels_last && d.rank() >= 3};
}

// Spatial sizes padded to three dims, 2-D tensors getting depth 1 (as the reference backend).
kernels::Dims3 spatial3(const TensorDesc& d) {
  const int dims = d.spatial_rank();
  if (dims != 2 && dims != 3)
    throw std::invalid_argument("cuda backend: tensors need 2 or 3 spatial dims, got " + d.shape_string());
  kernels::Dims3 e;
  e.v[0] = e.v[1] = e.v[2] = 1;
  for (int i = 0; i < dims; ++i) e.v[3 - dims + i] = static_cast<int>(d.shape[static_cast<size_t>(2 + i)]);
  return e;
}

// A per-dim attribute padded the same way: `fill` for the missing depth, and for every dim when
// `values` is empty (the reference backend's per_dim).
kernels::Dims3 per_dim3(const std::vector<int64_t>& values, int fill) {
  kernels::Dims3 e;
  e.v[0] = e.v[1] = e.v[2] = fill;
  const size_t dims = values.size();
  if (dims > 3) throw std::invalid_argument("cuda backend: more than 3 spatial dims");
  for (size_t i = 0; i < dims; ++i) e.v[3 - dims + i] = static_cast<int>(values[i]);
  return e;
}

kernels::PoolShape pool_shape(const TensorDesc& in, const TensorDesc& out, const PoolAttrs& a) {
  kernels::PoolShape s;
  s.n = static_cast<int>(in.batch());
  s.c = static_cast<int>(in.channels());
  s.in = spatial3(in);
  s.out = spatial3(out);
  s.kernel = per_dim3(a.kernel, 1);
  s.stride = per_dim3(a.stride, 1);
  s.padding = per_dim3(a.padding, 0);
  s.channels_last = in.layout == Layout::channels_last;
  return s;
}

kernels::UpsampleShape upsample_shape(const TensorDesc& in, const TensorDesc& out, int64_t scale) {
  kernels::UpsampleShape s;
  s.n = static_cast<int>(in.batch());
  s.c = static_cast<int>(in.channels());
  s.in = spatial3(in);
  s.out = spatial3(out);
  s.scale = static_cast<int>(scale);
  s.channels_last = in.layout == Layout::channels_last;
  return s;
}

template <class T>
T& need(T* p, const Op& op, const char* what) {
  if (p == nullptr) throw std::invalid_argument("cuda backend: " + op.name + ": missing " + what);
  return *p;
}

template <class T>
T* at(const std::vector<T*>& list, size_t index) {
  return index < list.size() ? list[index] : nullptr;
}

float* float_data(Tensor* t) { return t ? t->data<float>() : nullptr; }
const float* float_data(const Tensor* t) { return t ? t->data<float>() : nullptr; }
void* raw(Tensor* t) { return t ? t->raw() : nullptr; }

void* offset(void* base, int64_t bytes) { return base ? static_cast<char*>(base) + bytes : nullptr; }

bool input_needs_grad(const Graph& graph, const Op& op) {
  return graph.requires_grad()[static_cast<size_t>(op.inputs.at(0))];
}

// The weight (K, C/groups, kernel...) as an activation shape for the layout conversion.
kernels::ActShape weight_shape(const TensorDesc& w) {
  return {static_cast<int>(w.shape[0]), static_cast<int>(w.shape[1]), static_cast<int>(w.spatial_size()),
          w.layout == Layout::channels_last && w.rank() >= 3};
}

ConvWorkspaceLayout conv_layout(CudnnConv& conv, const ConvProblem& p, const std::vector<ConvDirection>& dirs) {
  std::vector<int64_t> bytes;
  for (ConvDirection d : dirs) bytes.push_back(conv.choose(p, d).workspace_bytes);
  const int64_t converted = weight_in_layout_order(p.w, p.x.layout) ? 0 : p.w.bytes();
  return conv_workspace_layout(converted, p.padded() ? p.y.bytes() : 0, bytes);
}

// The op's y (a conv_transpose's input or its gradient) inside cuDNN's zero-padded y.
kernels::BoxShape padding_box(const ConvProblem& p) {
  kernels::BoxShape b;
  b.n = static_cast<int>(p.y.batch());
  b.c = static_cast<int>(p.y.channels());
  b.small = spatial3(p.y_op);
  b.big = spatial3(p.y);
  b.channels_last = p.y.layout == Layout::channels_last;
  return b;
}

}  // namespace

// ---- capability and workspace, no GPU needed ---------------------------------------------------

std::optional<std::string> cuda_unsupported_reason(const Graph& graph, const Op& op) {
  const TensorDesc& out = graph.desc(op.output);
  const DType dtype = out.dtype;
  if (dtype == DType::float64)
    return std::string("float64 runs on the reference backend only (cuda: float32, tf32, float16, bfloat16)");
  if (!float_storage(dtype)) return "dtype " + std::string(to_string(dtype)) + " is not supported";
  if (out.rank() != 4 && out.rank() != 5) return "tensors need 2 or 3 spatial dims, got " + out.shape_string();
  auto too_big = [](const TensorDesc& d, const std::string& what) -> std::optional<std::string> {
    if (d.numel() <= kMaxElements) return std::nullopt;
    return what + " " + d.shape_string() + " has " + std::to_string(d.numel()) +
           " elements; cuDNN's legacy API and convbench's kernels index with 32-bit ints (at most 2^31-1)";
  };
  if (auto why = too_big(out, "output")) return why;
  for (int v : op.inputs) {
    const TensorDesc& in = graph.desc(v);
    if (in.dtype != dtype) return "inputs and output mix dtypes";
    if (in.layout != out.layout) return "inputs and output mix layouts";
    if (in.rank() != out.rank()) return "inputs and output differ in rank";
    if (auto why = too_big(in, "input")) return why;
  }
  for (int p : op.params) {
    const TensorDesc& d = graph.params.at(static_cast<size_t>(p)).desc;
    if (d.dtype != dtype) return "parameter " + graph.params.at(static_cast<size_t>(p)).name + " has another dtype";
    if (auto why = too_big(d, "parameter")) return why;
  }
  for (int b : op.buffers)
    if (graph.buffers.at(static_cast<size_t>(b)).desc.dtype != DType::float32)
      return "running statistics must be float32";
  for (const TensorDesc& a : aux_tensors(graph, op))
    if (auto why = too_big(a, "saved tensor")) return why;
  if (op.kind == OpKind::conv || op.kind == OpKind::conv_transpose) {
    try {
      const ConvProblem p = conv_problem(graph, op);
      cudnn_dims(p.x);
      cudnn_dims(p.y);
      cudnn_dims(p.w);
      to_int_vector(p.padding, "padding");
      to_int_vector(p.stride, "stride");
      to_int_vector(p.dilation, "dilation");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  }
  return std::nullopt;
}

int64_t kernel_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  switch (op.kind) {
    case OpKind::batch_norm:
      return phase == Phase::forward ? kernels::batch_norm_forward_workspace_bytes(act_shape(in), training)
                                     : kernels::batch_norm_backward_workspace_bytes(act_shape(in));
    case OpKind::group_norm: {
      const int groups = static_cast<int>(op.norm.groups);
      return phase == Phase::forward ? kernels::group_norm_forward_workspace_bytes(act_shape(in), groups)
                                     : kernels::group_norm_backward_workspace_bytes(act_shape(in), groups);
    }
    case OpKind::conv:
    case OpKind::conv_transpose:
      // The bias gradient is a per-channel sum over the output gradient.
      return phase == Phase::backward && op.conv.bias
                 ? kernels::channel_sum_workspace_bytes(act_shape(graph.desc(op.output)))
                 : 0;
    default: return 0;
  }
}

// ---- the backend -------------------------------------------------------------------------------

CudaBackend::CudaBackend(CudaBackendOptions options) : options_(options), allocator_(options.memory_limit_bytes) {
  if (auto why = cuda_unavailable_reason()) throw std::runtime_error("cuda: " + *why);
  CONVBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    CONVBENCH_CUDNN_CHECK(cudnnCreate(&handle_));
    CONVBENCH_CUDNN_CHECK(cudnnSetStream(handle_, stream_));
  } catch (...) {
    if (handle_) cudnnDestroy(handle_);
    cudaStreamDestroy(stream_);
    throw;
  }
  conv_ = std::make_unique<CudnnConv>(handle_, options.cudnn_algo, options.workspace_limit_bytes,
                                      [this] { allocator_.release_cached(); });
  int device = 0;
  char bus_id[32] = {};
  CONVBENCH_CUDA_CHECK(cudaGetDevice(&device));
  CONVBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  measurement_ = std::make_unique<CudaMeasurement>(stream_, first_launch_, bus_id);
  register_kernels();
}

CudaBackend::~CudaBackend() {
  cudaStreamSynchronize(stream_);
  measurement_.reset();  // frees the L2 scrub buffer while the stream still exists
  conv_.reset();
  try {
    allocator_.release_cached();
  } catch (const std::exception&) {
    // nothing useful to do in a destructor; the context frees its memory at exit
  }
  cudnnDestroy(handle_);
  cudaStreamDestroy(stream_);
}

std::optional<std::string> CudaBackend::limitation(const Graph& graph, const Op& op) const {
  return cuda_unsupported_reason(graph, op);
}

int64_t CudaBackend::workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  const int64_t kernel_bytes = kernel_workspace_bytes(graph, op, phase, training);
  if (op.kind != OpKind::conv && op.kind != OpKind::conv_transpose) return kernel_bytes;
  const ConvProblem p = conv_problem(graph, op);
  const bool grad_input = phase == Phase::backward && input_needs_grad(graph, op);
  // The bias gradient runs after cuDNN and reuses the same bytes.
  return std::max(kernel_bytes, conv_layout(*conv_, p, conv_directions(op.kind, phase, grad_input)).total);
}

void CudaBackend::record(const Op& op, const ConvProblem& p, ConvDirection d) {
  const std::string direction(to_string(d));
  nlohmann::json& entry = details_[op.name];
  if (entry.is_null()) {
    entry = {{"api", "cudnn-legacy"},
             {"mode", std::string(to_string(conv_->mode()))},
             {"workspace_limit_bytes", conv_->workspace_limit()},
             {"weight_layout_conversion", !weight_in_layout_order(p.w, p.x.layout)}};
  }
  // Written after every call: a fallback changes the algorithm that runs (and says why).
  entry[direction] = to_json(conv_->choose(p, d));
}

void CudaBackend::conv_forward(const ForwardCall& call) {
  const Op& op = call.op;
  const ConvProblem p = conv_problem(call.graph, op);
  const ConvDirection d = p.transposed ? ConvDirection::backward_data : ConvDirection::forward;
  const ConvWorkspaceLayout ws = conv_layout(*conv_, p, {d});
  if (ws.total > 0 && call.workspace == nullptr)
    throw std::invalid_argument("cuda backend: " + op.name + ": no workspace");
  const Tensor& x = need(at(call.inputs, 0), op, "input");
  const Tensor& w = need(at(call.params, 0), op, "weight");
  Tensor& y = need(call.output, op, "output");
  const void* filter = w.raw();
  if (ws.weight_bytes > 0) {
    kernels::convert_layout(w.desc.dtype, weight_shape(w.desc), w.raw(), offset(call.workspace, ws.weight_offset),
                            stream_);
    filter = offset(call.workspace, ws.weight_offset);
  }
  void* scratch = ws.cudnn_bytes > 0 ? offset(call.workspace, ws.cudnn_offset) : nullptr;
  if (p.transposed) {
    const void* dy = x.raw();
    if (p.padded()) {
      void* padded = offset(call.workspace, ws.padded_offset);
      kernels::pad_box(x.desc.dtype, padding_box(p), x.raw(), padded, stream_);
      dy = padded;
    }
    conv_->backward_data(p, filter, dy, y.raw(), scratch);
  } else {
    conv_->forward(p, x.raw(), filter, y.raw(), scratch);
  }
  if (op.conv.bias)
    kernels::add_channel_bias(y.desc.dtype, act_shape(y.desc), y.raw(), need(at(call.params, 1), op, "bias").raw(),
                              stream_);
  record(op, p, d);
}

void CudaBackend::conv_backward(const BackwardCall& call) {
  const Op& op = call.op;
  const ConvProblem p = conv_problem(call.graph, op);
  Tensor* grad_x = at(call.grad_inputs, 0);
  const bool grad_input = input_needs_grad(call.graph, op);
  if (grad_x && !grad_input)
    throw std::invalid_argument("cuda backend: " + op.name +
                                ": input gradient asked for, but the graph says the input needs none "
                                "(workspace_bytes sized the workspace without it)");
  const std::vector<ConvDirection> dirs = conv_directions(op.kind, Phase::backward, grad_input);
  const ConvWorkspaceLayout ws = conv_layout(*conv_, p, dirs);
  const int64_t total = std::max(ws.total, kernel_workspace_bytes(call.graph, op, Phase::backward, true));
  if (total > 0 && call.workspace == nullptr)
    throw std::invalid_argument("cuda backend: " + op.name + ": no workspace");
  const Tensor& g = need(call.grad_output, op, "grad_output");
  const Tensor& w = need(at(call.params, 0), op, "weight");
  void* region = offset(call.workspace, ws.weight_offset);
  void* scratch = ws.cudnn_bytes > 0 ? offset(call.workspace, ws.cudnn_offset) : nullptr;
  const bool convert = ws.weight_bytes > 0;

  if (grad_x) {
    const void* filter = w.raw();
    if (convert) {
      kernels::convert_layout(w.desc.dtype, weight_shape(w.desc), w.raw(), region, stream_);
      filter = region;
    }
    if (!p.transposed) {
      conv_->backward_data(p, filter, g.raw(), grad_x->raw(), scratch);
    } else if (!p.padded()) {
      conv_->forward(p, g.raw(), filter, grad_x->raw(), scratch);
    } else {  // cuDNN's conv yields the padded extent; the gradient is its leading box
      void* padded = offset(call.workspace, ws.padded_offset);
      conv_->forward(p, g.raw(), filter, padded, scratch);
      kernels::crop_box(g.desc.dtype, padding_box(p), padded, grad_x->raw(), stream_);
    }
    record(op, p, p.transposed ? ConvDirection::forward : ConvDirection::backward_data);
  }
  if (Tensor* grad_w = at(call.grad_params, 0)) {
    const Tensor& saved = need(at(call.inputs, 0), op, "saved input");
    // cuDNN's x is the op's input for a conv and grad_output for a conv_transpose.
    const void* cx = p.transposed ? g.raw() : saved.raw();
    const void* cdy = p.transposed ? saved.raw() : g.raw();
    if (p.padded()) {
      void* padded = offset(call.workspace, ws.padded_offset);
      kernels::pad_box(saved.desc.dtype, padding_box(p), saved.raw(), padded, stream_);
      cdy = padded;
    }
    void* dw = convert ? region : grad_w->raw();
    conv_->backward_filter(p, cx, cdy, dw, scratch);
    if (convert) {
      // dw is in the activations' order: back to the weight's.
      kernels::ActShape from = weight_shape(w.desc);
      from.channels_last = !from.channels_last;
      kernels::convert_layout(w.desc.dtype, from, dw, grad_w->raw(), stream_);
    }
    record(op, p, ConvDirection::backward_filter);
  }
  if (op.conv.bias) {
    if (Tensor* grad_b = at(call.grad_params, 1))
      kernels::channel_sum(g.desc.dtype, act_shape(g.desc), g.raw(), grad_b->raw(), call.workspace, stream_);
  }
}

namespace {

// What every forward kernel starts from: the op, its output and dtype, its inputs.
struct Fwd {
  explicit Fwd(const ForwardCall& c) : call(c), op(c.op), y(need(c.output, c.op, "output")), dtype(y.desc.dtype) {}
  const Tensor& input(size_t i) const { return need(at(call.inputs, i), op, "input"); }
  const ForwardCall& call;
  const Op& op;
  Tensor& y;
  const DType dtype;
};

// What every backward kernel starts from: the op, the output's gradient and its dtype, the first
// input's gradient (nullptr when none is needed).
struct Bwd {
  explicit Bwd(const BackwardCall& c)
      : call(c),
        op(c.op),
        g(need(c.grad_output, c.op, "grad_output")),
        dtype(g.desc.dtype),
        grad_x(at(c.grad_inputs, 0)) {}
  const Tensor& saved_input() const { return need(at(call.inputs, 0), op, "saved input"); }
  const BackwardCall& call;
  const Op& op;
  const Tensor& g;
  const DType dtype;
  Tensor* grad_x;
};

}  // namespace

// Every op kind's kernels, forward and backward side by side. They queue on the backend's stream.
void CudaBackend::register_kernels() {
  cudaStream_t stream = stream_;
  auto conv_fwd = [this](const ForwardCall& call) { conv_forward(call); };
  auto conv_bwd = [this](const BackwardCall& call) { conv_backward(call); };
  kernels_.add(OpKind::conv, {conv_fwd, conv_bwd});
  kernels_.add(OpKind::conv_transpose, {conv_fwd, conv_bwd});

  kernels_.add(OpKind::batch_norm,
               {[stream](const ForwardCall& call) {
                  const Fwd f(call);
                  const Tensor& x = f.input(0);
                  kernels::BatchNormForward a{act_shape(x.desc),
                                              x.raw(),
                                              need(at(call.params, 0), f.op, "weight").raw(),
                                              need(at(call.params, 1), f.op, "bias").raw(),
                                              need(at(call.buffers, 0), f.op, "running_mean").data<float>(),
                                              need(at(call.buffers, 1), f.op, "running_var").data<float>(),
                                              f.y.raw(),
                                              call.training ? float_data(at(call.aux, 0)) : nullptr,
                                              call.training ? float_data(at(call.aux, 1)) : nullptr,
                                              f.op.norm.eps,
                                              f.op.norm.momentum,
                                              call.training};
                  kernels::batch_norm_forward(f.dtype, a, call.workspace, stream);
                },
                [stream](const BackwardCall& call) {
                  const Bwd b(call);
                  const Tensor& x = b.saved_input();
                  kernels::BatchNormBackward a{act_shape(x.desc),
                                               x.raw(),
                                               b.g.raw(),
                                               need(at(call.aux, 0), b.op, "saved mean").data<float>(),
                                               need(at(call.aux, 1), b.op, "saved invstd").data<float>(),
                                               need(at(call.params, 0), b.op, "weight").raw(),
                                               raw(b.grad_x),
                                               raw(at(call.grad_params, 0)),
                                               raw(at(call.grad_params, 1))};
                  kernels::batch_norm_backward(b.dtype, a, call.workspace, stream);
                }});

  kernels_.add(OpKind::group_norm, {[stream](const ForwardCall& call) {
                                      const Fwd f(call);
                                      const Tensor& x = f.input(0);
                                      kernels::GroupNormForward a{act_shape(x.desc),
                                                                  static_cast<int>(f.op.norm.groups),
                                                                  x.raw(),
                                                                  need(at(call.params, 0), f.op, "weight").raw(),
                                                                  need(at(call.params, 1), f.op, "bias").raw(),
                                                                  f.y.raw(),
                                                                  float_data(at(call.aux, 0)),
                                                                  float_data(at(call.aux, 1)),
                                                                  f.op.norm.eps};
                                      kernels::group_norm_forward(f.dtype, a, call.workspace, stream);
                                    },
                                    [stream](const BackwardCall& call) {
                                      const Bwd b(call);
                                      const Tensor& x = b.saved_input();
                                      kernels::GroupNormBackward a{act_shape(x.desc),
                                                                   static_cast<int>(b.op.norm.groups),
                                                                   x.raw(),
                                                                   b.g.raw(),
                                                                   float_data(at(call.aux, 0)),
                                                                   float_data(at(call.aux, 1)),
                                                                   need(at(call.params, 0), b.op, "weight").raw(),
                                                                   raw(b.grad_x),
                                                                   raw(at(call.grad_params, 0)),
                                                                   raw(at(call.grad_params, 1)),
                                                                   b.op.norm.eps};
                                      kernels::group_norm_backward(b.dtype, a, call.workspace, stream);
                                    }});

  kernels_.add(OpKind::relu, {[stream](const ForwardCall& call) {
                                const Fwd f(call);
                                kernels::relu_forward(f.dtype, f.input(0).raw(), f.y.raw(), element_count(f.y.desc),
                                                      stream);
                              },
                              [stream](const BackwardCall& call) {
                                const Bwd b(call);
                                if (!b.grad_x) return;
                                kernels::relu_backward(b.dtype, need(call.output, b.op, "saved output").raw(),
                                                       b.g.raw(), b.grad_x->raw(), element_count(b.g.desc), stream);
                              }});

  kernels_.add(OpKind::leaky_relu, {[stream](const ForwardCall& call) {
                                      const Fwd f(call);
                                      kernels::leaky_relu_forward(f.dtype, f.input(0).raw(), f.y.raw(),
                                                                  static_cast<float>(f.op.negative_slope),
                                                                  element_count(f.y.desc), stream);
                                    },
                                    [stream](const BackwardCall& call) {
                                      const Bwd b(call);
                                      if (!b.grad_x) return;
                                      kernels::leaky_relu_backward(
                                          b.dtype, b.saved_input().raw(), b.g.raw(), b.grad_x->raw(),
                                          static_cast<float>(b.op.negative_slope), element_count(b.g.desc), stream);
                                    }});

  kernels_.add(OpKind::dropout,
               {[stream](const ForwardCall& call) {
                  const Fwd f(call);
                  const Tensor& x = f.input(0);
                  if (!call.training) {  // the identity (the executor normally aliases instead)
                    CONVBENCH_CUDA_CHECK(cudaMemcpyAsync(f.y.raw(), x.raw(), static_cast<size_t>(f.y.desc.bytes()),
                                                         cudaMemcpyDeviceToDevice, stream));
                    return;
                  }
                  Tensor* mask = at(call.aux, 0);
                  kernels::dropout_forward(f.dtype, act_shape(x.desc), x.raw(), f.y.raw(),
                                           mask ? mask->data<uint8_t>() : nullptr, static_cast<float>(f.op.dropout_p),
                                           static_cast<float>(1.0 / (1.0 - f.op.dropout_p)), call.seed, stream);
                },
                [stream](const BackwardCall& call) {
                  const Bwd b(call);
                  if (!b.grad_x) return;
                  kernels::dropout_backward(
                      b.dtype, b.g.raw(), need(at(call.aux, 0), b.op, "saved mask").data<uint8_t>(), b.grad_x->raw(),
                      static_cast<float>(1.0 / (1.0 - b.op.dropout_p)), element_count(b.g.desc), stream);
                }});

  // add and sub: the executor aliases add's gradients and sub's first; any tensor it does pass is
  // written.
  auto copy_grad = [stream](const Tensor& g, Tensor& to) {
    CONVBENCH_CUDA_CHECK(
        cudaMemcpyAsync(to.raw(), g.raw(), static_cast<size_t>(g.desc.bytes()), cudaMemcpyDeviceToDevice, stream));
  };
  kernels_.add(OpKind::add, {[stream](const ForwardCall& call) {
                               const Fwd f(call);
                               kernels::add(f.dtype, f.input(0).raw(), f.input(1).raw(), f.y.raw(),
                                            element_count(f.y.desc), stream);
                             },
                             [copy_grad](const BackwardCall& call) {
                               const Bwd b(call);
                               if (b.grad_x) copy_grad(b.g, *b.grad_x);
                               if (Tensor* grad_b = at(call.grad_inputs, 1)) copy_grad(b.g, *grad_b);
                             }});
  kernels_.add(OpKind::sub, {[stream](const ForwardCall& call) {
                               const Fwd f(call);
                               kernels::sub(f.dtype, f.input(0).raw(), f.input(1).raw(), f.y.raw(),
                                            element_count(f.y.desc), stream);
                             },
                             [copy_grad, stream](const BackwardCall& call) {
                               const Bwd b(call);
                               if (b.grad_x) copy_grad(b.g, *b.grad_x);
                               if (Tensor* grad_b = at(call.grad_inputs, 1))
                                 kernels::negate(b.dtype, b.g.raw(), grad_b->raw(), element_count(b.g.desc), stream);
                             }});

  kernels_.add(OpKind::concat,
               {[stream](const ForwardCall& call) {
                  const Fwd f(call);
                  int offset_channels = 0;
                  for (size_t i = 0; i < call.inputs.size(); ++i) {
                    const Tensor& x = f.input(i);
                    kernels::concat_copy_in(f.dtype, act_shape(x.desc), static_cast<int>(f.y.desc.channels()),
                                            offset_channels, x.raw(), f.y.raw(), stream);
                    offset_channels += static_cast<int>(x.desc.channels());
                  }
                },
                [stream](const BackwardCall& call) {
                  const Bwd b(call);
                  int offset_channels = 0;
                  for (size_t i = 0; i < b.op.inputs.size(); ++i) {
                    const TensorDesc& in = call.graph.desc(b.op.inputs[i]);
                    if (Tensor* gi = at(call.grad_inputs, i))
                      kernels::concat_copy_out(b.dtype, act_shape(in), static_cast<int>(b.g.desc.channels()),
                                               offset_channels, b.g.raw(), gi->raw(), stream);
                    offset_channels += static_cast<int>(in.channels());
                  }
                }});

  kernels_.add(OpKind::max_pool,
               {[stream](const ForwardCall& call) {
                  const Fwd f(call);
                  const Tensor& x = f.input(0);
                  Tensor* indices = call.training ? at(call.aux, 0) : nullptr;
                  kernels::max_pool_forward(f.dtype, pool_shape(x.desc, f.y.desc, f.op.pool), x.raw(), f.y.raw(),
                                            indices ? indices->data<int64_t>() : nullptr, stream);
                },
                [stream](const BackwardCall& call) {
                  const Bwd b(call);
                  if (!b.grad_x) return;
                  const Tensor* indices = at(call.aux, 0);
                  const Tensor* x = at(call.inputs, 0);
                  if (!indices && !x)
                    throw std::invalid_argument("cuda backend: " + b.op.name + ": missing saved indices and input");
                  kernels::max_pool_backward(b.dtype, pool_shape(b.grad_x->desc, b.g.desc, b.op.pool), b.g.raw(),
                                             indices ? indices->data<int64_t>() : nullptr, x ? x->raw() : nullptr,
                                             b.grad_x->raw(), stream);
                }});

  kernels_.add(OpKind::avg_pool, {[stream](const ForwardCall& call) {
                                    const Fwd f(call);
                                    const Tensor& x = f.input(0);
                                    kernels::avg_pool_forward(f.dtype, pool_shape(x.desc, f.y.desc, f.op.pool), x.raw(),
                                                              f.y.raw(), stream);
                                  },
                                  [stream](const BackwardCall& call) {
                                    const Bwd b(call);
                                    if (!b.grad_x) return;
                                    kernels::avg_pool_backward(b.dtype, pool_shape(b.grad_x->desc, b.g.desc, b.op.pool),
                                                               b.g.raw(), b.grad_x->raw(), stream);
                                  }});

  kernels_.add(OpKind::upsample,
               {[stream](const ForwardCall& call) {
                  const Fwd f(call);
                  const Tensor& x = f.input(0);
                  kernels::upsample_forward(f.dtype, upsample_shape(x.desc, f.y.desc, f.op.upsample_scale), x.raw(),
                                            f.y.raw(), stream);
                },
                [stream](const BackwardCall& call) {
                  const Bwd b(call);
                  if (!b.grad_x) return;
                  kernels::upsample_backward(b.dtype, upsample_shape(b.grad_x->desc, b.g.desc, b.op.upsample_scale),
                                             b.g.raw(), b.grad_x->raw(), stream);
                }});
}

void CudaBackend::forward(const ForwardCall& call) {
  first_launch_.before_launch();
  NvtxRange range("op " + call.op.name + " fwd");
  Backend::forward(call);
}

void CudaBackend::backward(const BackwardCall& call) {
  first_launch_.before_launch();
  NvtxRange range("op " + call.op.name + " bwd");
  Backend::backward(call);
}

void CudaBackend::accumulate(Tensor& dst, const Tensor& src) {
  first_launch_.before_launch();
  if (dst.desc.shape != src.desc.shape)
    throw std::invalid_argument("cuda backend: accumulate: shapes differ: " + dst.desc.shape_string() + " vs " +
                                src.desc.shape_string());
  if (dst.desc == src.desc)
    return kernels::accumulate(dst.desc.dtype, dst.raw(), src.raw(), element_count(dst.desc), stream_);
  add(dst, dst, src);
}

void CudaBackend::add(Tensor& out, const Tensor& a, const Tensor& b) {
  first_launch_.before_launch();
  if (a.desc.shape != b.desc.shape || out.desc.shape != a.desc.shape)
    throw std::invalid_argument("cuda backend: add: shapes differ: " + a.desc.shape_string() + ", " +
                                b.desc.shape_string() + " -> " + out.desc.shape_string());
  if (a.desc == b.desc && out.desc == a.desc)
    return kernels::add(out.desc.dtype, a.raw(), b.raw(), out.raw(), element_count(out.desc), stream_);
  // Different dtypes or layouts: element by element in logical order.
  const kernels::ActShape logical =
      out.desc.rank() >= 3 ? act_shape(out.desc) : kernels::ActShape{1, 1, element_count(out.desc), false};
  auto any = [](const Tensor& t) {
    return kernels::AnyTensor{t.raw(), t.desc.dtype, t.desc.layout == Layout::channels_last && t.desc.rank() >= 3};
  };
  kernels::add_any(any(a), any(b), out.raw(), out.desc.dtype,
                   out.desc.layout == Layout::channels_last && out.desc.rank() >= 3, logical, stream_);
}

void CudaBackend::copy_from_host(Tensor& dst, const void* src) {
  CONVBENCH_CUDA_CHECK(
      cudaMemcpyAsync(dst.raw(), src, static_cast<size_t>(dst.desc.bytes()), cudaMemcpyHostToDevice, stream_));
  // The host buffer is the caller's and may go away on return.
  CONVBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy_to_host(const Tensor& src, void* dst) {
  CONVBENCH_CUDA_CHECK(
      cudaMemcpyAsync(dst, src.raw(), static_cast<size_t>(src.desc.bytes()), cudaMemcpyDeviceToHost, stream_));
  CONVBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::synchronize() { CONVBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

void CudaBackend::fill(Tensor& t, double value) {
  first_launch_.before_launch();
  kernels::fill(t.desc.dtype, t.raw(), value, element_count(t.desc), stream_);
}

}  // namespace convbench::cuda

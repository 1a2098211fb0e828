#include "backends/cuda/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

#include "backends/cuda/cublas_linear.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_limits.hpp"
#include "backends/cuda/cuda_op_kernels.hpp"
#include "backends/cuda/nvtx_range.hpp"
#include "kernels/kernels.hpp"
#include "ops/autograd_rules.hpp"
#include "ops/op_registry.hpp"
#include "runtime/loss_scaler.hpp"

namespace convbench::cuda {
namespace {

void* offset(void* base, int64_t bytes) { return base ? static_cast<char*>(base) + bytes : nullptr; }

bool input_needs_grad(const Graph& graph, const Op& op) {
  return graph.values.at(static_cast<size_t>(op.inputs.at(0))).requires_grad;
}

// The weight (K, C/groups, kernel...) as an activation shape for the layout conversion.
kernels::ActShape weight_shape(const TensorDesc& w) {
  return {static_cast<int>(w.shape[0]), static_cast<int>(w.shape[1]), static_cast<int>(w.spatial_size()),
          w.layout == Layout::channels_last && w.rank() >= 3};
}

// `fused_bytes`: a fused forward's cuDNN scratch (conv_fusion.hpp), which runs in the same region
// as the unfused call it replaces, and which stays its fallback: room for either.
ConvWorkspaceLayout conv_layout(CudnnConv& conv, const ConvProblem& p, const std::vector<ConvDirection>& dirs,
                                int64_t fused_bytes = 0) {
  std::vector<int64_t> bytes = {fused_bytes};
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

// The fields every conv's op details start with: the API, the algorithm mode and the limits.
void start_conv_details(nlohmann::json& entry, const CudnnConv& conv, const ConvProblem& p) {
  if (!entry.is_null()) return;
  entry = {{"api", conv.api() == CudnnApi::graph ? "cudnn-graph" : "cudnn-legacy"},
           {"mode", std::string(to_string(conv.mode()))},
           {"workspace_limit_bytes", conv.workspace_limit()},
           {"weight_layout_conversion", !weight_in_layout_order(p.w, p.x.layout)}};
  if (conv.deterministic()) entry["deterministic_mode"] = true;
}

}  // namespace

// ---- capability and workspace, no GPU needed ---------------------------------------------------

std::optional<std::string> cuda_nondeterministic_reason(const Graph& /*graph*/, const Op& op, bool training) {
  // kernels/upsample.cu: each output scatters its gradient to its 2^d source positions with
  // atomicAdd, so the float sums' order (and last bits) vary from run to run.
  if (training && op.kind == OpKind::upsample && op.upsample_linear)
    return "upsample " + op.name + " (linear): its backward adds with atomics in the order the threads run";
  return std::nullopt;
}

namespace {

// Batch norm keeps float32 weights under float16 or bfloat16 activations, as autocast runs it
// (kernels/batch_norm.cu reads either).
bool float32_norm_params(const Op& op, DType param_dtype) {
  return (op.kind == OpKind::batch_norm || op.kind == OpKind::batch_norm_act) && param_dtype == DType::float32;
}

}  // namespace

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
    if (op.kind == OpKind::cast) {  // converts by design, between the float dtypes
      if (!float_storage(in.dtype)) return "cast from dtype " + std::string(to_string(in.dtype)) + " is not supported";
    } else if (in.dtype != dtype) {
      return "inputs and output mix dtypes";
    }
    // An op that changes the layout does so by design (convert_layout); every other kernel keeps its input's.
    if (in.layout != out.layout && !op_traits(op.kind).changes_layout) return "inputs and output mix layouts";
    if (in.rank() != out.rank()) return "inputs and output differ in rank";
    if (auto why = too_big(in, "input")) return why;
  }
  // The dtype the kernels see a parameter in: its own, or autocast's cast copy's (Op::param_cast).
  const auto seen_dtype = [&op](const TensorDesc& d) { return op.param_cast.value_or(d.dtype); };
  for (int p : op.params) {
    const Param& param = graph.params.at(static_cast<size_t>(p));
    const TensorDesc& d = param.desc;
    if (seen_dtype(d) != dtype && !float32_norm_params(op, d.dtype))
      return "parameter " + param.name + " has another dtype";
    if (auto why = too_big(d, "parameter")) return why;
  }
  for (int b : op.buffers) {
    const Param& buffer = graph.buffers.at(static_cast<size_t>(b));
    if (op.kind == OpKind::conv) {  // a frozen conv's weight and bias: as a parameter's
      if (seen_dtype(buffer.desc) != dtype) return "buffer " + buffer.name + " has another dtype";
      if (auto why = too_big(buffer.desc, "buffer")) return why;
    } else if (buffer.desc.dtype != DType::float32) {
      return "running statistics must be float32";
    }
  }
  for (const TensorDesc& a : aux_tensors(graph, op))
    if (auto why = too_big(a, "saved tensor")) return why;
  if (op.kind == OpKind::conv || op.kind == OpKind::conv_transpose || op.kind == OpKind::folded_conv) {
    try {
      const ConvProblem p = conv_problem(graph, op);
      // cuDNN's own view: a conv_transpose's zero-padded y is larger than any tensor of the op,
      // and kernels::pad_box indexes it with ints.
      for (const auto& [d, what] :
           {std::pair{&p.x, "cuDNN's x"}, std::pair{&p.y, "cuDNN's y"}, std::pair{&p.w, "cuDNN's filter"}})
        if (auto why = too_big(*d, what)) return why;
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
    case OpKind::batch_norm_act:
      return phase == Phase::forward ? kernels::batch_norm_forward_workspace_bytes(act_shape(in), training)
                                     : kernels::batch_norm_backward_workspace_bytes(act_shape(in));
    case OpKind::group_norm: {
      const int groups = static_cast<int>(op.norm.groups);
      return phase == Phase::forward ? kernels::group_norm_forward_workspace_bytes(act_shape(in), groups)
                                     : kernels::group_norm_backward_workspace_bytes(act_shape(in), groups);
    }
    case OpKind::layer_norm:
      return phase == Phase::forward ? kernels::layer_norm_forward_workspace_bytes(act_shape(in))
                                     : kernels::layer_norm_backward_workspace_bytes(act_shape(in));
    case OpKind::layer_scale:  // the weight gradient is a per-channel reduction
      return phase == Phase::backward ? kernels::channel_sum_workspace_bytes(act_shape(in)) : 0;
    case OpKind::conv:
    case OpKind::conv_transpose:
    case OpKind::folded_conv:
      // The bias gradient is a per-channel sum over the output gradient (none when frozen).
      return phase == Phase::backward && op.conv.bias && !op.conv.frozen
                 ? kernels::channel_sum_workspace_bytes(act_shape(graph.desc(op.output)))
                 : 0;
    case OpKind::upsample:
      // Linear backward accumulates in float (atomicAdd) before writing the gradient's dtype.
      return phase == Phase::backward && op.upsample_linear
                 ? kernels::upsample_linear_backward_workspace_bytes(upsample_shape(in, graph.desc(op.output), op))
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
  conv_ = std::make_unique<CudnnConv>(
      handle_, options.cudnn_algo, options.workspace_limit_bytes, [this] { allocator_.release_cached(); },
      options.deterministic, options.cudnn_api);
  int device = 0;
  char bus_id[32] = {};
  CONVBENCH_CUDA_CHECK(cudaGetDevice(&device));
  CONVBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  measurement_ = std::make_unique<CudaMeasurement>(stream_, first_launch_, bus_id,
                                                   [this](DType d) { return measure_cuda_limits(*this, *conv_, d); });
  nvtx_ops_ = nvtx_tool_attached(std::getenv("NVTX_INJECTION64_PATH"));
  if (uses_cublas(options_.linear)) cublas_ = std::make_unique<CublasLinear>(stream_);
  register_kernels();
}

CudaBackend::~CudaBackend() {
  cudaStreamSynchronize(stream_);
  measurement_.reset();  // frees the L2 scrub buffer while the stream still exists
  conv_.reset();
  cublas_.reset();
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
  if (op.kind == OpKind::folded_conv) return folded_conv_workspace_bytes(graph, op, phase, training);
  return conv_workspace_bytes(graph, op, phase, training);
}

int64_t CudaBackend::conv_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) {
  const int64_t kernel_bytes = kernel_workspace_bytes(graph, op, phase, training);
  if (op.kind != OpKind::conv && op.kind != OpKind::conv_transpose && op.kind != OpKind::folded_conv)
    return kernel_bytes;
  if (runs_own_depthwise(graph, op, options_.depthwise_conv))
    return std::max(kernel_bytes, own_depthwise_workspace_bytes(graph, op, phase));
  const ConvProblem p = conv_problem(graph, op);
  const bool grad_input = phase == Phase::backward && input_needs_grad(graph, op);
  // The bias gradient runs after cuDNN and reuses the same bytes.
  const int64_t fused = phase == Phase::forward ? fused_workspace_bytes(p, fused_epilogue(graph, op, training)) : 0;
  return std::max(kernel_bytes,
                  conv_layout(*conv_, p, conv_directions(op.kind, phase, grad_input, !op.conv.frozen), fused).total);
}

int64_t CudaBackend::fused_workspace_bytes(const ConvProblem& p, const std::optional<ConvEpilogue>& e) {
  const ConvAlgoChoice* choice = e ? conv_->choose_fused(p, *e) : nullptr;
  return choice ? choice->workspace_bytes : 0;
}

std::optional<ConvEpilogue> CudaBackend::taken_epilogue(const Graph& graph, const Op& op) const {
  if (!fuses_activations(options_.conv_fusion) || op.kind != OpKind::conv ||
      runs_own_depthwise(graph, op, options_.depthwise_conv))
    return std::nullopt;
  return conv_act_fusion(graph, op_index(graph, op));
}

std::optional<ConvEpilogue> CudaBackend::statistics_epilogue(const Graph& graph, const Op& op, bool training) const {
  if (!training || !fuses_bn_statistics(options_.conv_fusion) || op.kind != OpKind::conv ||
      runs_own_depthwise(graph, op, options_.depthwise_conv))
    return std::nullopt;
  return conv_bn_stats_fusion(graph, op_index(graph, op));
}

std::optional<ConvEpilogue> CudaBackend::fused_epilogue(const Graph& graph, const Op& op, bool training) const {
  if (auto e = taken_epilogue(graph, op)) return e;
  return statistics_epilogue(graph, op, training);
}

int CudaBackend::fills_statistics_of(const Graph& graph, int index) const {
  if (index < 0 || static_cast<size_t>(index) >= graph.ops.size()) return -1;
  const std::optional<ConvEpilogue> e = statistics_epilogue(graph, graph.ops[static_cast<size_t>(index)], true);
  return e ? e->bn_op : -1;
}

bool CudaBackend::activation_taken_by_conv(const Graph& graph, const Op& op) const {
  if (!fuses_activations(options_.conv_fusion)) return false;
  const int conv = conv_taking_activation(graph, op);
  return conv >= 0 && taken_epilogue(graph, graph.ops[static_cast<size_t>(conv)]).has_value();
}

void CudaBackend::record_fusion(const Graph& graph, const Op& op, const ConvProblem& p, const ConvEpilogue& epilogue,
                                bool fused) {
  // A call whose outcome is unchanged writes no JSON (this runs on every call of the conv).
  if (const auto seen = fusion_recorded_.find(op.name); seen != fusion_recorded_.end() && seen->second == fused) return;
  fusion_recorded_[op.name] = fused;
  nlohmann::json& entry = details_[op.name];
  const std::string state = fused ? "fused" : "unfused";
  start_conv_details(entry, *conv_, p);
  entry["epilogue"] = epilogue.name();
  entry["fusion"] = state;
  if (fused) {
    entry["forward"] = to_json(*conv_->choose_fused(p, epilogue));
    entry.erase("fusion_unavailable");
  } else {
    entry["fusion_unavailable"] = conv_->fused_unavailable(p, epilogue);
  }
  if (epilogue.kind == ConvEpilogue::Kind::bn_statistics) {
    // The batch norm's own row: fused, it only finishes the sums the conv wrote.
    const Op& bn = graph.ops.at(static_cast<size_t>(epilogue.bn_op));
    details_[bn.name] = {{"statistics_from", op.name}, {"fusion", state}};
    return;
  }
  // The activation's own row: it runs nothing; its time is in the conv's.
  const Op& act = graph.ops.at(static_cast<size_t>(epilogue.act_op));
  details_[act.name] = {{"taken_by", op.name}, {"fusion", state}};
}

void CudaBackend::record(const Op& op, const ConvProblem& p, ConvDirection d) {
  const ConvAlgoChoice& choice = conv_->choose(p, d);
  Recorded& seen = recorded_[op.name][static_cast<size_t>(d)];
  if (seen.algo == choice.algo && seen.math == static_cast<int>(choice.math) &&
      seen.fallbacks == choice.fallback_from.size())
    return;
  seen = {choice.algo, static_cast<int>(choice.math), choice.fallback_from.size()};
  const std::string direction(to_string(d));
  nlohmann::json& entry = details_[op.name];
  start_conv_details(entry, *conv_, p);
  // Written again whenever the choice changed: a fallback changes the algorithm that runs (and says why).
  entry[direction] = to_json(choice);
}

void CudaBackend::conv_forward(const ForwardCall& call) {
  const Op& op = call.op;
  if (runs_own_depthwise(call.graph, op, options_.depthwise_conv)) {
    own_depthwise_forward(call, stream_);
    if (!details_.contains(op.name)) details_[op.name] = own_depthwise_details(call.graph, op, options_.depthwise_conv);
    return;
  }
  const ConvProblem p = conv_problem(call.graph, op);
  const ConvDirection d = p.transposed ? ConvDirection::backward_data : ConvDirection::forward;
  // The workspace is sized for the planned epilogue, as workspace_bytes() sized it.
  const std::optional<ConvEpilogue> planned = fused_epilogue(call.graph, op, call.training);
  const ConvWorkspaceLayout ws = conv_layout(*conv_, p, {d}, fused_workspace_bytes(p, planned));
  // The sums go into the aux the executor made for the batch norm; a call without them (a
  // test driving the backend op by op) runs unfused.
  const bool statistics = planned && planned->kind == ConvEpilogue::Kind::bn_statistics;
  const std::optional<ConvEpilogue> epilogue = statistics && call.filled_aux.size() != 2 ? std::nullopt : planned;
  sums_ready_for_ = -1;
  if (ws.total > 0 && call.workspace == nullptr)
    throw std::invalid_argument("cuda backend: " + op.name + ": no workspace");
  const Tensor& x = need(at(call.inputs, 0), op, "input");
  const Tensor& w = need(at(conv_weights(call), 0), op, "weight");
  Tensor& y = need(call.output, op, "output");
  const void* filter = w.raw();
  if (ws.weight_bytes > 0) {
    kernels::convert_layout(w.desc.dtype, weight_shape(w.desc), w.raw(), offset(call.workspace, ws.weight_offset),
                            stream_);
    filter = offset(call.workspace, ws.weight_offset);
  }
  void* scratch = ws.cudnn_bytes > 0 ? offset(call.workspace, ws.cudnn_offset) : nullptr;
  const void* bias = op.conv.bias ? need(at(conv_weights(call), 1), op, "bias").raw() : nullptr;
  if (epilogue) {
    void* sum = statistics ? call.filled_aux[0]->raw() : nullptr;
    void* sqsum = statistics ? call.filled_aux[1]->raw() : nullptr;
    if (statistics) {
      // The sums land in fresh allocator blocks; cuDNN does not say whether an engine
      // overwrites its GENSTATS outputs or adds to them (atomics across CTAs), so they start at
      // zero either way. Two small memsets, on the stream, legal under graph capture.
      for (const Tensor* t : call.filled_aux)
        CONVBENCH_CUDA_CHECK(cudaMemsetAsync(t->raw(), 0, static_cast<size_t>(t->desc.bytes()), stream_));
    }
    const bool fused = conv_->forward_fused(p, *epilogue, x.raw(), filter, bias, y.raw(), scratch, sum, sqsum);
    record_fusion(call.graph, op, p, *epilogue, fused);
    if (fused) {
      if (statistics) sums_ready_for_ = epilogue->bn_op;
      return;
    }
  }
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
  if (bias) kernels::add_channel_bias(y.desc.dtype, act_shape(y.desc), y.raw(), bias, stream_);
  record(op, p, d);
  if (epilogue && !statistics)  // not fused: the activation's kernel, in place, as its own op would have run it
    kernels::activation_forward(call.graph.ops.at(static_cast<size_t>(epilogue->act_op)), y.desc.dtype, y.raw(),
                                y.raw(), element_count(y.desc), stream_);
}

void CudaBackend::conv_backward(const BackwardCall& call) {
  const Op& op = call.op;
  Tensor* grad_x = at(call.grad_inputs, 0);
  const bool grad_input = input_needs_grad(call.graph, op);
  if (grad_x && !grad_input)
    throw std::invalid_argument("cuda backend: " + op.name +
                                ": input gradient asked for, but the graph says the input needs none "
                                "(workspace_bytes sized the workspace without it)");
  if (runs_own_depthwise(call.graph, op, options_.depthwise_conv)) {
    own_depthwise_backward(call, stream_);
    if (!details_.contains(op.name)) details_[op.name] = own_depthwise_details(call.graph, op, options_.depthwise_conv);
    return;
  }
  const ConvProblem p = conv_problem(call.graph, op);
  const std::vector<ConvDirection> dirs = conv_directions(op.kind, Phase::backward, grad_input, !op.conv.frozen);
  const ConvWorkspaceLayout ws = conv_layout(*conv_, p, dirs);
  const int64_t total = std::max(ws.total, kernel_workspace_bytes(call.graph, op, Phase::backward, true));
  if (total > 0 && call.workspace == nullptr)
    throw std::invalid_argument("cuda backend: " + op.name + ": no workspace");
  const Tensor& g = need(call.grad_output, op, "grad_output");
  const Tensor& w = need(at(conv_weights(call), 0), op, "weight");
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

// Every op kind's kernels, forward and backward side by side. They queue on the backend's stream.
void CudaBackend::register_kernels() {
  cudaStream_t stream = stream_;
  auto conv_fwd = [this](const ForwardCall& call) { conv_forward(call); };
  auto conv_bwd = [this](const BackwardCall& call) { conv_backward(call); };
  kernels_.add(OpKind::conv, {conv_fwd, conv_bwd});
  kernels_.add(OpKind::conv_transpose, {conv_fwd, conv_bwd});

  register_batch_norm_kernels(kernels_, stream);
  register_group_norm_kernels(kernels_, stream);
  register_layer_norm_kernels(kernels_, stream);
  register_elementwise_kernels(kernels_, stream);
  register_concat_kernels(kernels_, stream);
  register_upsample_kernels(kernels_, stream);
  register_layout_kernels(kernels_, stream);
  register_pool_kernels(kernels_, stream);
  register_linear_kernels(kernels_, stream, cublas_.get());
  kernels_.add(OpKind::folded_conv, {[this](const ForwardCall& call) { folded_conv_forward(call); },
                                     [this](const BackwardCall& call) { folded_conv_backward(call); }});
}

void CudaBackend::forward(const ForwardCall& call) {
  if (activation_taken_by_conv(call.graph, call.op)) return;  // the conv before it applied it
  first_launch_.before_launch();
  std::optional<NvtxRange> range;
  if (nvtx_ops_) range.emplace("op " + call.op.name + " fwd");
  if (sums_ready_for_ >= 0) {
    // The conv before wrote this batch norm's sums (conv_bn_stats): it finishes them.
    const bool taker = sums_ready_for_ == op_index(call.graph, call.op);
    sums_ready_for_ = -1;
    if (taker) return batch_norm_forward_from_sums(call, stream_);
  }
  Backend::forward(call);
}

void CudaBackend::backward(const BackwardCall& call) {
  first_launch_.before_launch();
  std::optional<NvtxRange> range;
  if (nvtx_ops_) range.emplace("op " + call.op.name + " bwd");
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

void CudaBackend::scale(Tensor& out, const Tensor& in, double factor) {
  first_launch_.before_launch();
  if (!(out.desc == in.desc))
    throw std::invalid_argument("cuda backend: scale: the two tensors differ in shape, dtype or layout");
  kernels::scale(in.desc.dtype, in.raw(), out.raw(), static_cast<float>(factor), element_count(in.desc), stream_);
}

bool CudaBackend::unscale(const std::vector<Tensor*>& grads, double factor, Tensor& flags) {
  first_launch_.before_launch();
  if (flags.desc.bytes() < kLossScalerStepBytes)
    throw std::invalid_argument("cuda backend: unscale: the flags tensor holds fewer than 8 bytes");
  // flags: the inverse scale, then the found-inf flag (float32 each), as GradScaler keeps them.
  const float host[2] = {static_cast<float>(factor), 0.0f};
  CONVBENCH_CUDA_CHECK(cudaMemcpyAsync(flags.raw(), host, sizeof host, cudaMemcpyHostToDevice, stream_));
  auto* found_inf = static_cast<float*>(flags.raw()) + 1;
  for (Tensor* g : grads) {
    if (g->desc.dtype != DType::float32)
      throw std::invalid_argument("cuda backend: unscale: gradients are float32 under autocast, got " +
                                  std::string(to_string(g->desc.dtype)));
    kernels::unscale(g->data<float>(), host[0], found_inf, element_count(g->desc), stream_);
  }
  float found = 0.0f;
  CONVBENCH_CUDA_CHECK(cudaMemcpyAsync(&found, found_inf, sizeof found, cudaMemcpyDeviceToHost, stream_));
  CONVBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));  // also keeps `host` alive for its copy
  return found == 0.0f;
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

#include "backends/cuda/cudnn_graph.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cudnn_conv.hpp"

namespace convbench::cuda {

std::string_view to_string(CudnnApi api) { return api == CudnnApi::graph ? "graph" : "legacy"; }

std::optional<CudnnApi> parse_cudnn_api(std::string_view name) {
  if (name == "legacy") return CudnnApi::legacy;
  if (name == "graph") return CudnnApi::graph;
  return std::nullopt;
}

std::optional<std::string> engine_rejection(const EngineNotes& notes, DType dtype, bool deterministic) {
  if (dtype == DType::float32 && notes.tensor_core) return "tensor cores (TF32) for float32";
  if (notes.down_convert_inputs) return "down-converts its inputs";
  if (deterministic && notes.nondeterministic) return "nondeterministic";
  return std::nullopt;
}

// One backend descriptor, destroyed with its owner.
class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type) {
    CONVBENCH_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &descriptor_));
  }
  ~BackendDescriptor() {
    if (descriptor_) cudnnBackendDestroyDescriptor(descriptor_);
  }
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  cudnnBackendDescriptor_t get() const { return descriptor_; }

 private:
  cudnnBackendDescriptor_t descriptor_ = nullptr;
};

namespace {

using Descriptor = std::shared_ptr<BackendDescriptor>;

Descriptor make(cudnnBackendDescriptorType_t type) { return std::make_shared<BackendDescriptor>(type); }

// The graph's setters: every one checked with file:line, since a graph that cannot be described
// is a bug of this file, not a property of an engine.
#define CONVBENCH_SET(desc, name, type, count, values) \
  CONVBENCH_CUDNN_CHECK(cudnnBackendSetAttribute((desc)->get(), (name), (type), (count), (values)))

// `virtual_float`: a tensor between two operations of a fused graph, which never reaches memory
// and which the engine holds in float (cuDNN's runtime fusion computes its epilogue in float).
Descriptor tensor(const TensorDesc& t, Layout memory_layout, int64_t uid, bool virtual_float = false) {
  const TensorDesc in_memory{t.shape, t.dtype, memory_layout};
  const std::vector<int64_t> dims = in_memory.shape, strides = in_memory.strides();
  const cudnnDataType_t type = virtual_float ? CUDNN_DATA_FLOAT : cudnn_data_type(t.dtype);
  // The allocator's blocks are aligned to far more than 16 bytes; a conversion region of the
  // workspace to 256.
  const int64_t alignment = 16;
  Descriptor d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  CONVBENCH_SET(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  CONVBENCH_SET(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()), dims.data());
  CONVBENCH_SET(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()), strides.data());
  CONVBENCH_SET(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  CONVBENCH_SET(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  if (virtual_float) {
    const bool is_virtual = true;
    CONVBENCH_SET(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
  }
  CONVBENCH_CUDNN_CHECK(cudnnBackendFinalize(d->get()));
  return d;
}

// cuDNN's pointwise mode for a fused epilogue's activation: leaky_relu is RELU_FWD with its
// negative slope (the op's lower clip slope), relu the same with 0.
cudnnPointwiseMode_t pointwise_mode(ConvEpilogueAct act) {
  switch (act) {
    case ConvEpilogueAct::relu:
    case ConvEpilogueAct::leaky_relu: return CUDNN_POINTWISE_RELU_FWD;
    case ConvEpilogueAct::sigmoid: return CUDNN_POINTWISE_SIGMOID_FWD;
  }
  throw std::logic_error("cudnn_graph: no pointwise mode for this epilogue");
}

// One pointwise operation y = mode(x[, b]) computed in float; `b` only for a binary mode (add).
// `relu_slope`: RELU_FWD's lower clip slope (leaky_relu's negative slope; 0 for relu).
Descriptor pointwise(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor* b, const Descriptor& y,
                     double relu_slope, std::vector<Descriptor>& keep) {
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  Descriptor pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  CONVBENCH_SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  CONVBENCH_SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
  if (mode == CUDNN_POINTWISE_RELU_FWD && relu_slope != 0.0)
    CONVBENCH_SET(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &relu_slope);
  CONVBENCH_CUDNN_CHECK(cudnnBackendFinalize(pw->get()));
  keep.push_back(pw);
  const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  cudnnBackendDescriptor_t pw_raw = pw->get(), x_raw = x->get(), y_raw = y->get();
  Descriptor op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc, 1, &pw_raw);
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, desc, 1, &x_raw);
  if (b) {
    cudnnBackendDescriptor_t b_raw = (*b)->get();
    CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, desc, 1, &b_raw);
  }
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, desc, 1, &y_raw);
  CONVBENCH_CUDNN_CHECK(cudnnBackendFinalize(op->get()));
  return op;
}

// y's per-channel sum and sum of squares (conv_bn_stats): GENSTATS over y, computed in float
// into two float (1, C, 1, ...) tensors.
Descriptor gen_stats(const Descriptor& y, const Descriptor& sum, const Descriptor& sqsum) {
  const cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  cudnnBackendDescriptor_t y_raw = y->get(), sum_raw = sum->get(), sqsum_raw = sqsum->get();
  Descriptor op = make(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &mode);
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, desc, 1, &y_raw);
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, desc, 1, &sum_raw);
  CONVBENCH_SET(op, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, desc, 1, &sqsum_raw);
  CONVBENCH_CUDNN_CHECK(cudnnBackendFinalize(op->get()));
  return op;
}

// The (1, C, 1, ...) shape a per-channel bias broadcasts from over y.
TensorDesc bias_desc(const TensorDesc& y, DType dtype) {
  std::vector<int64_t> shape(y.shape.size(), 1);
  shape.at(1) = y.shape.at(1);
  return TensorDesc{shape, dtype, y.layout};
}

Descriptor convolution(const ConvProblem& p) {
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;  // every dtype accumulates in float
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t dims = static_cast<int64_t>(p.padding.size());
  Descriptor d = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  CONVBENCH_SET(d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  CONVBENCH_SET(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  CONVBENCH_SET(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
  CONVBENCH_SET(d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dims, p.dilation.data());
  CONVBENCH_SET(d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, dims, p.stride.data());
  // Symmetric, as the legacy API's: a conv_transpose's asymmetric case pads cuDNN's y instead
  // (ConvProblem::y_extra), the same way for both APIs.
  CONVBENCH_SET(d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, dims, p.padding.data());
  CONVBENCH_SET(d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, dims, p.padding.data());
  CONVBENCH_CUDNN_CHECK(cudnnBackendFinalize(d->get()));
  return d;
}

// The attributes of the direction's operation: which of them takes cuDNN's x, w and y (the
// tensor or its gradient) differs by direction, the rest is the same.
struct OperationAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t conv, x, w, y, alpha, beta;
};

OperationAttributes attributes_of(ConvDirection d) {
  switch (d) {
    case ConvDirection::forward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case ConvDirection::backward_data:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvDirection::backward_filter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  }
  throw std::logic_error("cudnn_graph: unknown convolution direction");
}

// The direction's one operation over x, w and y.
Descriptor operation(ConvDirection d, const Descriptor& conv, const Descriptor& x, const Descriptor& w,
                     const Descriptor& y) {
  const float alpha = 1.0f, beta = 0.0f;  // overwrite the output
  cudnnBackendDescriptor_t c = conv->get(), xd = x->get(), wd = w->get(), yd = y->get();
  const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  const OperationAttributes a = attributes_of(d);
  Descriptor op = make(a.type);
  CONVBENCH_SET(op, a.conv, desc, 1, &c);
  CONVBENCH_SET(op, a.x, desc, 1, &xd);
  CONVBENCH_SET(op, a.w, desc, 1, &wd);
  CONVBENCH_SET(op, a.y, desc, 1, &yd);
  CONVBENCH_SET(op, a.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
  CONVBENCH_SET(op, a.beta, CUDNN_TYPE_FLOAT, 1, &beta);
  CONVBENCH_CUDNN_CHECK(cudnnBackendFinalize(op->get()));
  return op;
}

// cuDNN 9.19 deprecates giving the operation graph and the execution plan the handle (for a
// device-property descriptor); the handle still works, and it is what runs on every cuDNN 9.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr cudnnBackendAttributeName_t kGraphHandle = CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
constexpr cudnnBackendAttributeName_t kPlanHandle = CUDNN_ATTR_EXECUTION_PLAN_HANDLE;
#pragma GCC diagnostic pop

EngineNotes notes_of(const Descriptor& engine) {
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  EngineNotes out;
  if (cudnnBackendGetAttribute(engine->get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS)
    return out;
  for (int64_t i = 0; i < count; ++i) {
    out.tensor_core |= notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
    out.down_convert_inputs |= notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    out.reduced_precision_reduction |= notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
    out.nondeterministic |= notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
  }
  return out;
}

}  // namespace

GraphConvPlans::GraphConvPlans(cudnnHandle_t handle, const ConvProblem& p, ConvDirection direction, bool deterministic,
                               int64_t workspace_limit) {
  // The filter is given in the activations' order (the backend converts it when needed).
  const Descriptor x = tensor(p.x, p.x.layout, kGraphX);
  const Descriptor w = tensor(p.w, p.x.layout, kGraphW);
  const Descriptor y = tensor(p.y, p.y.layout, kGraphY);
  const Descriptor conv = convolution(p);
  const Descriptor op = operation(direction, conv, x, w, y);
  const Descriptor graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnBackendDescriptor_t op_raw = op->get();
  CONVBENCH_SET(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_raw);
  CONVBENCH_SET(graph, kGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle);
  CONVBENCH_CUDNN_CHECK(cudnnBackendFinalize(graph->get()));
  keep_alive_ = {x, w, y, conv, op, graph};

  add_candidates(handle, graph, p.x.dtype, deterministic, workspace_limit);
}

GraphConvPlans::GraphConvPlans(cudnnHandle_t handle, const ConvProblem& p, const ConvEpilogue& epilogue,
                               bool deterministic, int64_t workspace_limit)
    : has_bias_(epilogue.bias), has_statistics_(epilogue.kind == ConvEpilogue::Kind::bn_statistics) {
  if (p.transposed) throw std::logic_error("cudnn_graph: a fused epilogue on a transposed convolution");
  const Descriptor x = tensor(p.x, p.x.layout, kGraphX);
  const Descriptor w = tensor(p.w, p.x.layout, kGraphW);
  const Descriptor y = tensor(p.y, p.y.layout, kGraphY);
  const Descriptor conv = convolution(p);
  keep_alive_ = {x, w, y, conv};
  // Without a bias a statistics graph's convolution writes y itself; every other graph's
  // convolution writes a virtual float tensor that the next operation reads.
  const bool conv_writes_y = has_statistics_ && !epilogue.bias;
  const Descriptor conv_out = conv_writes_y ? y : tensor(p.y, p.y.layout, kGraphConvOut, true);
  keep_alive_.push_back(conv_out);
  std::vector<Descriptor> ops = {operation(ConvDirection::forward, conv, x, w, conv_out)};
  Descriptor act_in = conv_out;
  if (epilogue.bias) {
    // The bias in the weight's dtype (autocast's cast copy, or the parameter itself).
    const Descriptor bias = tensor(bias_desc(p.y, p.w.dtype), p.y.layout, kGraphBias);
    const Descriptor biased = has_statistics_ ? y : tensor(p.y, p.y.layout, kGraphBiased, true);
    keep_alive_.insert(keep_alive_.end(), {bias, biased});
    ops.push_back(pointwise(CUDNN_POINTWISE_ADD, conv_out, &bias, biased, 0.0, keep_alive_));
    act_in = biased;
  }
  if (has_statistics_) {
    // y, as stored, then its sums: the batch norm's statistics from the values it will read.
    const Descriptor sum = tensor(bias_desc(p.y, DType::float32), p.y.layout, kGraphSum);
    const Descriptor sqsum = tensor(bias_desc(p.y, DType::float32), p.y.layout, kGraphSqSum);
    keep_alive_.insert(keep_alive_.end(), {sum, sqsum});
    ops.push_back(gen_stats(y, sum, sqsum));
    finalize_fused(handle, ops, p.x.dtype, deterministic, workspace_limit);
    return;
  }
  ops.push_back(pointwise(pointwise_mode(epilogue.function), act_in, nullptr, y,
                          epilogue.function == ConvEpilogueAct::leaky_relu ? epilogue.negative_slope : 0.0,
                          keep_alive_));
  finalize_fused(handle, ops, p.x.dtype, deterministic, workspace_limit);
}

void GraphConvPlans::finalize_fused(cudnnHandle_t handle, const std::vector<Descriptor>& ops, DType dtype,
                                    bool deterministic, int64_t workspace_limit) {
  keep_alive_.insert(keep_alive_.end(), ops.begin(), ops.end());
  const Descriptor graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> ops_raw;
  for (const Descriptor& op : ops) ops_raw.push_back(op->get());
  CONVBENCH_SET(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                static_cast<int64_t>(ops_raw.size()), ops_raw.data());
  CONVBENCH_SET(graph, kGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle);
  // A graph no engine can fuse on this device may already be refused here.
  if (const cudnnStatus_t s = cudnnBackendFinalize(graph->get()); s != CUDNN_STATUS_SUCCESS) {
    rejected_.push_back("the fused operation graph: " + cudnn_status_text(s));
    return;
  }
  keep_alive_.push_back(graph);
  add_candidates(handle, graph, dtype, deterministic, workspace_limit);
}

void GraphConvPlans::add_candidates(cudnnHandle_t handle, const Descriptor& graph, DType dtype, bool deterministic,
                                    int64_t workspace_limit) {
  // Heuristic mode A's list, then the fallback list, each engine once, in that order.
  std::set<int64_t> seen;
  int64_t not_finalized = 0;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    const Descriptor heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendDescriptor_t graph_raw = graph->get();
    CONVBENCH_SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph_raw);
    CONVBENCH_SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    const char* mode_name = mode == CUDNN_HEUR_MODE_A ? "heuristic mode A" : "fallback list";
    if (const cudnnStatus_t s = cudnnBackendFinalize(heur->get()); s != CUDNN_STATUS_SUCCESS) {
      rejected_.push_back(std::string(mode_name) + ": " + cudnn_status_text(s));
      continue;
    }
    int64_t count = 0;
    CONVBENCH_CUDNN_CHECK(cudnnBackendGetAttribute(heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(configs.back()->get());
    }
    int64_t returned = 0;
    if (count > 0)
      CONVBENCH_CUDNN_CHECK(cudnnBackendGetAttribute(heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()));
    for (int64_t i = 0; i < returned; ++i) {
      const Descriptor engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      cudnnBackendDescriptor_t engine_raw = engine->get();
      int64_t got = 0, index = -1;
      if (cudnnBackendGetAttribute(raw[static_cast<size_t>(i)], CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &engine_raw) != CUDNN_STATUS_SUCCESS ||
          cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &index) !=
              CUDNN_STATUS_SUCCESS)
        continue;
      if (!seen.insert(index).second) continue;
      const EngineNotes notes = notes_of(engine);
      // The notes that change numerics stay in the name, so that op details say what ran.
      const std::string name = "engine " + std::to_string(index) + (notes.tensor_core ? " (tensor cores)" : "") +
                               (notes.reduced_precision_reduction ? " (reduced-precision reduction)" : "");
      if (const auto why = engine_rejection(notes, dtype, deterministic)) {
        rejected_.push_back(name + ": " + *why);
        continue;
      }
      if (candidates_.size() >= kMaxPlans) {
        ++not_finalized;
        continue;
      }
      Descriptor plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      cudnnBackendDescriptor_t config_raw = raw[static_cast<size_t>(i)];
      CONVBENCH_SET(plan, kPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle);
      CONVBENCH_SET(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config_raw);
      if (const cudnnStatus_t s = cudnnBackendFinalize(plan->get()); s != CUDNN_STATUS_SUCCESS) {
        rejected_.push_back(name + ": " + cudnn_status_text(s));
        continue;
      }
      int64_t bytes = 0;
      CONVBENCH_CUDNN_CHECK(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                     CUDNN_TYPE_INT64, 1, &got, &bytes));
      if (bytes > workspace_limit) {
        rejected_.push_back(name + ": needs " + std::to_string(bytes) + " bytes of workspace, over the limit of " +
                            std::to_string(workspace_limit));
        continue;
      }
      keep_alive_.push_back(configs[static_cast<size_t>(i)]);
      candidates_.push_back({plan, index, bytes, !notes.nondeterministic, name});
    }
  }
  if (not_finalized > 0)
    rejected_.push_back(std::to_string(not_finalized) + " more engine" + (not_finalized > 1 ? "s" : "") +
                        " not finalized: at most " + std::to_string(kMaxPlans) +
                        " plans per problem and direction (a runtime-compiled engine takes 0.3-2 s to finalize)");
}

GraphConvPlans::~GraphConvPlans() = default;

cudnnStatus_t GraphConvPlans::execute(cudnnHandle_t handle, size_t index, const void* x, const void* w, const void* y,
                                      void* workspace, const void* bias, void* sum, void* sqsum) const {
  if (has_bias_ != (bias != nullptr) || has_statistics_ != (sum != nullptr) || has_statistics_ != (sqsum != nullptr))
    return CUDNN_STATUS_BAD_PARAM;
  // cuDNN takes one array of pointers for inputs and outputs alike.
  std::vector<int64_t> uids = {kGraphX, kGraphW, kGraphY};
  std::vector<void*> pointers = {const_cast<void*>(x), const_cast<void*>(w), const_cast<void*>(y)};
  if (has_bias_) {
    uids.push_back(kGraphBias);
    pointers.push_back(const_cast<void*>(bias));
  }
  if (has_statistics_) {
    uids.insert(uids.end(), {kGraphSum, kGraphSqSum});
    pointers.insert(pointers.end(), {sum, sqsum});
  }
  const auto count = static_cast<int64_t>(uids.size());
  cudnnBackendDescriptor_t pack = nullptr;
  cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, count, uids.data());
  if (s == CUDNN_STATUS_SUCCESS)
    s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, count,
                                 pointers.data());
  if (s == CUDNN_STATUS_SUCCESS)
    s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendFinalize(pack);
  if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendExecute(handle, candidates_.at(index).plan->get(), pack);
  cudnnBackendDestroyDescriptor(pack);
  return s;
}

}  // namespace convbench::cuda

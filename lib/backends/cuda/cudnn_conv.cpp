#include "backends/cuda/cudnn_conv.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "runtime/backend.hpp"

namespace convbench::cuda {

// ---- names and small mappings ----------------------------------------------------------------

std::string_view to_string(CudnnAlgoMode mode) { return mode == CudnnAlgoMode::find ? "find" : "heuristic"; }

std::optional<CudnnAlgoMode> parse_cudnn_algo_mode(std::string_view name) {
  if (name == "heuristic") return CudnnAlgoMode::heuristic;
  if (name == "find") return CudnnAlgoMode::find;
  return std::nullopt;
}

cudnnDataType_t cudnn_data_type(DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: return CUDNN_DATA_FLOAT;
    case DType::float16: return CUDNN_DATA_HALF;
    case DType::bfloat16: return CUDNN_DATA_BFLOAT16;
    default: break;
  }
  throw std::invalid_argument("cuda backend: cuDNN convolutions take float32, tf32, float16 or bfloat16, not " +
                              std::string(to_string(dtype)));
}

cudnnMathType_t requested_math(DType dtype) { return dtype == DType::float32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH; }

std::string algo_name(ConvDirection direction, int algo) {
  static const char* const fwd[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
                                    "WINOGRAD",      "WINOGRAD_NONFUSED"};
  static const char* const data[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  static const char* const filter[] = {"ALGO_0",    "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
                                       "FFT_TILING"};
  auto pick = [algo](const char* const* names, int count) -> std::string {
    return algo >= 0 && algo < count ? names[algo] : "ALGO_" + std::to_string(algo);
  };
  switch (direction) {
    case ConvDirection::forward: return pick(fwd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    case ConvDirection::backward_data: return pick(data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    case ConvDirection::backward_filter: return pick(filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
  }
  return "?";
}

std::string_view math_name(cudnnMathType_t math) {
  switch (math) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
  }
  return "?";
}

std::string algo_and_math_name(ConvDirection direction, int algo, cudnnMathType_t math) {
  return algo_name(direction, algo) + " (" + std::string(math_name(math)) + ")";
}

nlohmann::json to_json(const ConvAlgoChoice& c) {
  nlohmann::json j = {{"deterministic", c.deterministic}, {"workspace_bytes", c.workspace_bytes}};
  if (c.engine.empty()) {
    j["algo"] = algo_name(c.direction, c.algo);
    j["math"] = math_name(c.math);
  } else {
    j["engine"] = c.engine;
  }
  if (c.find_ms >= 0) j["find_ms"] = c.find_ms;
  if (!c.fallback_from.empty()) j["fallback_from"] = c.fallback_from;
  if (!c.find_found_none.empty()) j["find_found_none"] = c.find_found_none;
  if (!c.rejected.empty()) j["rejected"] = c.rejected;
  return j;
}

// ---- descriptors -----------------------------------------------------------------------------

// One direction of a problem: the choice, and every usable candidate in cuDNN's order (the
// choice is candidates[current]).
struct CudnnConv::DirectionPlan {
  ConvAlgoChoice choice;
  std::vector<ConvAlgoCandidate> candidates;
  size_t current = 0;
  std::shared_ptr<GraphConvPlans> graph;  // the graph API's plans (candidates[i].algo indexes them)
};

// A fused forward (conv_fusion.hpp): its engines, or why there are none.
struct CudnnConv::FusedPlan {
  std::optional<DirectionPlan> plan;  // none: unavailable
  std::string unavailable;
};

struct CudnnConv::Plan {
  DType dtype = DType::float32;
  Layout layout = Layout::channels_first;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int64_t x_bytes = 0, w_bytes = 0, y_bytes = 0;
  std::string shapes;   // "x 2x8x9x9 -> y 2x16x9x9, groups 4" for messages
  ConvProblem problem;  // what the graph API describes to cuDNN
  std::array<std::optional<DirectionPlan>, 3> directions;
  std::map<std::string, FusedPlan> fused;  // by ConvEpilogue::name()

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
};

namespace {

void set_tensor(cudnnTensorDescriptor_t desc, const TensorDesc& t) {
  const CudnnDims d = cudnn_dims(t);
  CONVBENCH_CUDNN_CHECK(cudnnSetTensorNdDescriptor(desc, cudnn_data_type(t.dtype), static_cast<int>(d.dims.size()),
                                                   d.dims.data(), d.strides.data()));
}

size_t direction_index(ConvDirection d) { return static_cast<size_t>(d); }

// Device buffers for cudnnFind; never counted as tensors because no op runs while they exist.
class Scratch {
 public:
  Scratch(int64_t bytes, const std::function<void()>& release_memory, cudaStream_t stream) : bytes_(bytes) {
    if (bytes <= 0) return;
    cudaError_t status = cudaMalloc(&ptr_, static_cast<size_t>(bytes));
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      if (release_memory) release_memory();
      status = cudaMalloc(&ptr_, static_cast<size_t>(bytes));
    }
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw OutOfMemory(bytes, "cudnnFind scratch buffer");
    }
    CONVBENCH_CUDA_CHECK(status);
    // Zeros, not garbage: some algorithms run slower on NaN or denormal inputs. On the handle's
    // stream, where cudnnFind runs next: cudaMemset would go to the legacy default stream,
    // which a non-blocking stream does not wait for.
    CONVBENCH_CUDA_CHECK(cudaMemsetAsync(ptr_, 0, static_cast<size_t>(bytes), stream));
  }
  ~Scratch() {
    if (ptr_) cudaFree(ptr_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_;
};

// Whether an algorithm from Get/Find may be used: it is supported, and float32 never runs on
// tensor cores (TF32) - the reason float32 asks for FMA math in the first place.
template <class Perf>
bool usable(const Perf& r, DType dtype) {
  return r.status == CUDNN_STATUS_SUCCESS && (dtype != DType::float32 || r.mathType == CUDNN_FMA_MATH);
}

}  // namespace

// ---- CudnnConv -------------------------------------------------------------------------------

CudnnConv::CudnnConv(cudnnHandle_t handle, CudnnAlgoMode mode, int64_t workspace_limit_bytes,
                     std::function<void()> release_memory, bool deterministic, CudnnApi api)
    : handle_(handle),
      mode_(mode),
      workspace_limit_(workspace_limit_bytes),
      release_memory_(std::move(release_memory)),
      deterministic_(deterministic),
      api_(api) {
  if (api == CudnnApi::graph && mode == CudnnAlgoMode::find)
    throw std::invalid_argument(
        "--cudnn-api graph chooses engines by cuDNN's heuristics; --cudnn-algo find times the legacy API's "
        "algorithms: use one or the other");
}

CudnnConv::~CudnnConv() = default;

CudnnConv::Plan& CudnnConv::plan(const ConvProblem& p) {
  auto it = plans_.find(p);
  if (it != plans_.end()) return *it->second;

  auto plan = std::make_unique<Plan>();
  plan->dtype = p.x.dtype;
  plan->layout = p.x.layout;
  plan->shapes = "x " + p.x.shape_string() + " -> y " + p.y.shape_string() + ", weight " + p.w.shape_string() +
                 ", groups " + std::to_string(p.groups);
  plan->math = requested_math(p.x.dtype);
  plan->x_bytes = p.x.bytes();
  plan->y_bytes = p.y.bytes();
  plan->w_bytes = p.w.bytes();
  plan->problem = p;
  CONVBENCH_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->x));
  CONVBENCH_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->y));
  CONVBENCH_CUDNN_CHECK(cudnnCreateFilterDescriptor(&plan->w));
  CONVBENCH_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv));
  set_tensor(plan->x, p.x);
  set_tensor(plan->y, p.y);
  // The filter is described in the activations' order; the backend converts it when needed.
  const std::vector<int> w_dims = cudnn_dims(p.w).dims;
  const cudnnTensorFormat_t format = p.x.layout == Layout::channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  CONVBENCH_CUDNN_CHECK(cudnnSetFilterNdDescriptor(plan->w, cudnn_data_type(p.w.dtype), format,
                                                   static_cast<int>(w_dims.size()), w_dims.data()));
  const std::vector<int> pad = to_int_vector(p.padding, "padding");
  const std::vector<int> stride = to_int_vector(p.stride, "stride");
  const std::vector<int> dilation = to_int_vector(p.dilation, "dilation");
  CONVBENCH_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(plan->conv, static_cast<int>(pad.size()), pad.data(),
                                                        stride.data(), dilation.data(), CUDNN_CROSS_CORRELATION,
                                                        CUDNN_DATA_FLOAT));
  CONVBENCH_CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan->conv, static_cast<int>(p.groups)));
  CONVBENCH_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, plan->math));
  return *plans_.emplace(p, std::move(plan)).first->second;
}

const ConvAlgoChoice& CudnnConv::choose(const ConvProblem& p, ConvDirection d) {
  return direction_plan(plan(p), d).choice;
}

CudnnConv::DirectionPlan& CudnnConv::direction_plan(Plan& plan, ConvDirection d) {
  std::optional<DirectionPlan>& slot = plan.directions[direction_index(d)];
  if (!slot) slot = api_ == CudnnApi::graph ? select_graph(plan, d) : select(plan, d);
  return *slot;
}

// The graph API's engines for the direction, best first (cudnn_graph.hpp): the first is the
// choice, the others are the fallbacks, all within the workspace of the first.
CudnnConv::DirectionPlan CudnnConv::select_graph(Plan& plan, ConvDirection d) {
  DirectionPlan result;
  result.graph = std::make_shared<GraphConvPlans>(handle_, plan.problem, d, deterministic_, workspace_limit_);
  const std::vector<GraphConvPlans::Candidate>& found = result.graph->candidates();
  std::vector<std::string> rejected = result.graph->rejected();
  if (found.empty()) {
    std::string text;
    for (const std::string& r : rejected) text += (text.empty() ? "" : "; ") + r;
    throw UnsupportedOp("cuda backend: cuDNN's graph API offers no " + std::string(to_string(d)) + " engine for this " +
                        std::string(to_string(plan.dtype)) + " " + std::string(to_string(plan.layout)) +
                        " convolution (" + plan.shapes + ") within the workspace limit of " +
                        std::to_string(workspace_limit_) + " bytes (" + text + ")");
  }
  for (size_t i = 0; i < found.size(); ++i)
    result.candidates.push_back({static_cast<int>(i), CUDNN_DEFAULT_MATH, found[i].deterministic,
                                 found[i].workspace_bytes, -1.0f, found[i].name});
  const ConvAlgoCandidate& first = result.candidates.front();
  result.choice = ConvAlgoChoice{d,  first.algo, first.math, first.deterministic, first.workspace_bytes, -1.0f,
                                 {}, {},         rejected,   first.name};
  return result;
}

// The largest workspace any algorithm of the direction needs within the limit: what cudnnFind
// gets, so that it can try every algorithm we would accept.
int64_t CudnnConv::find_workspace_bytes(Plan& plan, ConvDirection d) {
  int64_t most = 0;
  auto consider = [&](cudnnStatus_t status, size_t bytes) {
    if (status == CUDNN_STATUS_SUCCESS && static_cast<int64_t>(bytes) <= workspace_limit_)
      most = std::max(most, static_cast<int64_t>(bytes));
  };
  size_t bytes = 0;
  switch (d) {
    case ConvDirection::forward:
      for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a)
        consider(cudnnGetConvolutionForwardWorkspaceSize(handle_, plan.x, plan.w, plan.conv, plan.y,
                                                         static_cast<cudnnConvolutionFwdAlgo_t>(a), &bytes),
                 bytes);
      break;
    case ConvDirection::backward_data:
      for (int a = 0; a < CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT; ++a)
        consider(cudnnGetConvolutionBackwardDataWorkspaceSize(handle_, plan.w, plan.y, plan.conv, plan.x,
                                                              static_cast<cudnnConvolutionBwdDataAlgo_t>(a), &bytes),
                 bytes);
      break;
    case ConvDirection::backward_filter:
      for (int a = 0; a < CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT; ++a)
        consider(
            cudnnGetConvolutionBackwardFilterWorkspaceSize(handle_, plan.x, plan.y, plan.conv, plan.w,
                                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(a), &bytes),
            bytes);
      break;
  }
  return most;
}

CudnnConv::DirectionPlan CudnnConv::select(Plan& plan, ConvDirection d) {
  // Candidates in cuDNN's order of preference (heuristic) or of measured time (find); their
  // workspace is asked for below, with each one's own math type.
  std::vector<ConvAlgoCandidate> candidates;
  std::vector<std::string> rejected;  // "ALGO (MATH): why" of each result that was not usable
  auto collect = [&](const auto* results, int count, bool measured) {
    for (int i = 0; i < count; ++i) {
      if (usable(results[i], plan.dtype)) {
        candidates.push_back({static_cast<int>(results[i].algo),
                              results[i].mathType,
                              results[i].determinism == CUDNN_DETERMINISTIC,
                              0,
                              measured ? results[i].time : -1.0f,
                              {}});
        continue;
      }
      const bool supported = results[i].status == CUDNN_STATUS_SUCCESS;
      rejected.push_back(algo_and_math_name(d, static_cast<int>(results[i].algo), results[i].mathType) + ": " +
                         (supported ? "TF32 math for float32" : cudnnGetErrorString(results[i].status)));
    }
  };
  auto joined = [](const std::vector<std::string>& parts) {
    std::string text;
    for (const std::string& p : parts) text += (text.empty() ? "" : ", ") + p;
    return text;
  };
  CONVBENCH_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv, plan.math));
  int max_count = 0, returned = 0;
  std::unique_ptr<Scratch> a, b, out, ws;
  if (mode_ == CudnnAlgoMode::find) {
    // Inputs and output of the direction, and the largest acceptable workspace.
    const int64_t in_a = d == ConvDirection::backward_data ? plan.w_bytes : plan.x_bytes;
    const int64_t in_b = d == ConvDirection::forward ? plan.w_bytes : plan.y_bytes;
    const int64_t out_bytes = d == ConvDirection::forward         ? plan.y_bytes
                              : d == ConvDirection::backward_data ? plan.x_bytes
                                                                  : plan.w_bytes;
    cudaStream_t stream = nullptr;
    CONVBENCH_CUDNN_CHECK(cudnnGetStream(handle_, &stream));
    a = std::make_unique<Scratch>(in_a, release_memory_, stream);
    b = std::make_unique<Scratch>(in_b, release_memory_, stream);
    out = std::make_unique<Scratch>(out_bytes, release_memory_, stream);
    ws = std::make_unique<Scratch>(find_workspace_bytes(plan, d), release_memory_, stream);
  }
  // cuDNN's list for the direction: measured by cudnnFind, or its heuristic's order.
  auto query = [&](bool find) {
    switch (d) {
      case ConvDirection::forward: {
        CONVBENCH_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &max_count));
        std::vector<cudnnConvolutionFwdAlgoPerf_t> r(static_cast<size_t>(max_count));
        if (find)
          CONVBENCH_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
              handle_, plan.x, a->get(), plan.w, b->get(), plan.conv, plan.y, out->get(), max_count, &returned,
              r.data(), ws->get(), static_cast<size_t>(ws->bytes())));
        else
          CONVBENCH_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle_, plan.x, plan.w, plan.conv, plan.y,
                                                                       max_count, &returned, r.data()));
        collect(r.data(), returned, find);
        break;
      }
      case ConvDirection::backward_data: {
        CONVBENCH_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle_, &max_count));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> r(static_cast<size_t>(max_count));
        if (find)
          CONVBENCH_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
              handle_, plan.w, a->get(), plan.y, b->get(), plan.conv, plan.x, out->get(), max_count, &returned,
              r.data(), ws->get(), static_cast<size_t>(ws->bytes())));
        else
          CONVBENCH_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle_, plan.w, plan.y, plan.conv, plan.x,
                                                                            max_count, &returned, r.data()));
        collect(r.data(), returned, find);
        break;
      }
      case ConvDirection::backward_filter: {
        CONVBENCH_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle_, &max_count));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> r(static_cast<size_t>(max_count));
        if (find)
          CONVBENCH_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
              handle_, plan.x, a->get(), plan.y, b->get(), plan.conv, plan.w, out->get(), max_count, &returned,
              r.data(), ws->get(), static_cast<size_t>(ws->bytes())));
        else
          CONVBENCH_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle_, plan.x, plan.y, plan.conv,
                                                                              plan.w, max_count, &returned, r.data()));
        collect(r.data(), returned, find);
        break;
      }
    }
  };
  const bool find = mode_ == CudnnAlgoMode::find;
  query(find);
  // cudnnFind can return no usable result where the heuristic's algorithms run (seen on an H200,
  // cuDNN 9.19, for 3-D channels-last problems): then the heuristic's order is used and the
  // choice says so, with what Find returned, instead of refusing a convolution that runs.
  std::string find_found_none;
  if (find && candidates.empty()) {
    find_found_none = std::to_string(returned) + " returned, none usable: " + joined(rejected);
    rejected.clear();
    query(false);
  }
  if (deterministic_) candidates = prefer_deterministic(std::move(candidates), d, rejected);

  // Every candidate whose workspace, asked for with its own math type, fits the limit, in
  // cuDNN's order: the first is the choice, the others are the fallbacks.
  DirectionPlan result;
  for (ConvAlgoCandidate c : candidates) {
    CONVBENCH_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv, c.math));
    size_t bytes = 0;
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    switch (d) {
      case ConvDirection::forward:
        status = cudnnGetConvolutionForwardWorkspaceSize(handle_, plan.x, plan.w, plan.conv, plan.y,
                                                         static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), &bytes);
        break;
      case ConvDirection::backward_data:
        status = cudnnGetConvolutionBackwardDataWorkspaceSize(
            handle_, plan.w, plan.y, plan.conv, plan.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), &bytes);
        break;
      case ConvDirection::backward_filter:
        status = cudnnGetConvolutionBackwardFilterWorkspaceSize(
            handle_, plan.x, plan.y, plan.conv, plan.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), &bytes);
        break;
    }
    if (status != CUDNN_STATUS_SUCCESS || static_cast<int64_t>(bytes) > workspace_limit_) continue;
    c.workspace_bytes = static_cast<int64_t>(bytes);
    result.candidates.push_back(c);
  }
  CONVBENCH_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv, plan.math));
  if (result.candidates.empty())
    throw UnsupportedOp("cuda backend: cuDNN offers no " + std::string(to_string(d)) + " algorithm for this " +
                        std::string(to_string(plan.dtype)) + " " + std::string(to_string(plan.layout)) +
                        " convolution (" + plan.shapes + ") with " + std::string(math_name(plan.math)) +
                        " within the workspace limit of " + std::to_string(workspace_limit_) + " bytes (" +
                        std::to_string(returned) + " returned, " + std::to_string(candidates.size()) + " usable" +
                        (rejected.empty() ? "" : "; rejected: " + joined(rejected)) +
                        (find_found_none.empty() ? "" : "; cudnnFind first: " + find_found_none) + ")");
  const ConvAlgoCandidate& first = result.candidates.front();
  result.choice = ConvAlgoChoice{
      d,        first.algo, first.math, first.deterministic, first.workspace_bytes, first.find_ms, {}, find_found_none,
      rejected, {}};
  return result;
}

void CudnnConv::execute(Plan& pl, DirectionPlan& dp, const ConvProblem& p, ConvDirection d,
                        const std::function<cudnnStatus_t(const ConvAlgoCandidate&, size_t)>& call) {
  const size_t workspace = static_cast<size_t>(dp.choice.workspace_bytes);
  FallbackCalls calls;
  calls.attempt = [&](const ConvAlgoCandidate& c) {
    if (dp.graph) return call(c, workspace);
    const cudnnStatus_t status = cudnnSetConvolutionMathType(pl.conv, c.math);
    return status == CUDNN_STATUS_SUCCESS ? call(c, workspace) : status;
  };
  calls.describe = cudnn_status_text;
  calls.context_broken = []() -> std::optional<std::string> {
    const cudaError_t e = cudaPeekAtLastError();
    if (e == cudaSuccess) return std::nullopt;
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  };
  const auto what = [&] {
    return std::string(to_string(d)) + " " + std::string(to_string(p.x.dtype)) + " " +
           std::string(to_string(p.x.layout)) + " convolution (" + pl.shapes + ")";
  };
  const FallbackResult r = run_with_fallback(dp.candidates, dp.current, dp.choice.workspace_bytes, d, what, calls);
  if (r.ran == dp.current) return;
  // Later calls start with the algorithm that ran; the workspace stays what was allocated.
  const ConvAlgoCandidate& ran = dp.candidates[r.ran];
  dp.current = r.ran;
  dp.choice.algo = ran.algo;
  dp.choice.math = ran.math;
  dp.choice.deterministic = ran.deterministic;
  dp.choice.find_ms = ran.find_ms;
  dp.choice.engine = ran.name;
  dp.choice.fallback_from.insert(dp.choice.fallback_from.end(), r.failures.begin(), r.failures.end());
}

void CudnnConv::forward(const ConvProblem& p, const void* x, const void* w, void* y, void* workspace) {
  Plan& pl = plan(p);
  const float alpha = 1.0f, beta = 0.0f;
  DirectionPlan& dp = direction_plan(pl, ConvDirection::forward);
  execute(pl, dp, p, ConvDirection::forward, [&](const ConvAlgoCandidate& c, size_t bytes) {
    if (dp.graph) return dp.graph->execute(handle_, static_cast<size_t>(c.algo), x, w, y, workspace);
    return cudnnConvolutionForward(handle_, &alpha, pl.x, x, pl.w, w, pl.conv,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), workspace, bytes, &beta, pl.y, y);
  });
}

void CudnnConv::backward_data(const ConvProblem& p, const void* w, const void* dy, void* dx, void* workspace) {
  Plan& pl = plan(p);
  const float alpha = 1.0f, beta = 0.0f;
  DirectionPlan& dp = direction_plan(pl, ConvDirection::backward_data);
  execute(pl, dp, p, ConvDirection::backward_data, [&](const ConvAlgoCandidate& c, size_t bytes) {
    if (dp.graph) return dp.graph->execute(handle_, static_cast<size_t>(c.algo), dx, w, dy, workspace);
    return cudnnConvolutionBackwardData(handle_, &alpha, pl.w, w, pl.y, dy, pl.conv,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), workspace, bytes, &beta,
                                        pl.x, dx);
  });
}

void CudnnConv::backward_filter(const ConvProblem& p, const void* x, const void* dy, void* dw, void* workspace) {
  Plan& pl = plan(p);
  const float alpha = 1.0f, beta = 0.0f;
  DirectionPlan& dp = direction_plan(pl, ConvDirection::backward_filter);
  execute(pl, dp, p, ConvDirection::backward_filter, [&](const ConvAlgoCandidate& c, size_t bytes) {
    if (dp.graph) return dp.graph->execute(handle_, static_cast<size_t>(c.algo), x, dw, dy, workspace);
    return cudnnConvolutionBackwardFilter(handle_, &alpha, pl.x, x, pl.y, dy, pl.conv,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), workspace, bytes, &beta,
                                          pl.w, dw);
  });
}

CudnnConv::FusedPlan& CudnnConv::fused_plan(Plan& pl, const ConvEpilogue& epilogue) {
  const std::string key = epilogue.name();
  if (auto it = pl.fused.find(key); it != pl.fused.end()) return it->second;
  FusedPlan& fp = pl.fused[key];
  if (api_ != CudnnApi::graph) {
    fp.unavailable = "fusion runs on cuDNN's graph API (--cudnn-api graph)";
    return fp;
  }
  const auto graph = std::make_shared<GraphConvPlans>(handle_, pl.problem, epilogue, deterministic_, workspace_limit_);
  std::vector<std::string> rejected = graph->rejected();
  if (graph->candidates().empty()) {
    std::string why;
    for (const std::string& r : rejected) why += (why.empty() ? ": " : "; ") + r;
    fp.unavailable = "cuDNN offers no fused " + key + " engine for this " + std::string(to_string(pl.dtype)) + " " +
                     std::string(to_string(pl.layout)) + " convolution (" + pl.shapes + ")" + why;
    return fp;
  }
  DirectionPlan dp;
  dp.graph = graph;
  for (size_t i = 0; i < graph->candidates().size(); ++i) {
    const GraphConvPlans::Candidate& c = graph->candidates()[i];
    dp.candidates.push_back(
        {static_cast<int>(i), CUDNN_DEFAULT_MATH, c.deterministic, c.workspace_bytes, -1.0f, c.name});
  }
  const ConvAlgoCandidate& first = dp.candidates.front();
  dp.choice = ConvAlgoChoice{ConvDirection::forward,
                             first.algo,
                             first.math,
                             first.deterministic,
                             first.workspace_bytes,
                             -1.0f,
                             {},
                             {},
                             rejected,
                             first.name};
  fp.plan = std::move(dp);
  return fp;
}

const ConvAlgoChoice* CudnnConv::choose_fused(const ConvProblem& p, const ConvEpilogue& epilogue) {
  FusedPlan& fp = fused_plan(plan(p), epilogue);
  return fp.plan ? &fp.plan->choice : nullptr;
}

std::string CudnnConv::fused_unavailable(const ConvProblem& p, const ConvEpilogue& epilogue) {
  return fused_plan(plan(p), epilogue).unavailable;
}

bool CudnnConv::forward_fused(const ConvProblem& p, const ConvEpilogue& epilogue, const void* x, const void* w,
                              const void* bias, void* y, void* workspace, void* sum, void* sqsum) {
  Plan& pl = plan(p);
  FusedPlan& fp = fused_plan(pl, epilogue);
  if (!fp.plan) return false;
  DirectionPlan& dp = *fp.plan;
  try {
    execute(pl, dp, p, ConvDirection::forward, [&](const ConvAlgoCandidate& c, size_t) {
      return dp.graph->execute(handle_, static_cast<size_t>(c.algo), x, w, y, workspace, bias, sum, sqsum);
    });
  } catch (const UnsupportedOp& e) {
    // Every fused engine refused at execution: the unfused path runs from now on, and says why.
    fp.unavailable = std::string("every fused engine failed at execution: ") + e.what();
    fp.plan.reset();
    return false;
  } catch (const std::runtime_error& e) {
    // A status after which run_with_fallback tries no other engine (a BAD_PARAM sub-code from a
    // runtime-fusion engine, say), or workspace: while the CUDA context is intact, it ends the
    // fused path, not the row; the unfused conv runs from now on, and says why.
    if (cudaPeekAtLastError() != cudaSuccess) throw;
    fp.unavailable = std::string("a fused engine failed at execution: ") + e.what();
    fp.plan.reset();
    return false;
  }
  return true;
}

}  // namespace convbench::cuda

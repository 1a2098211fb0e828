// cuDNN convolutions: the one place convbench calls cuDNN.
//
// API: cuDNN 9's legacy convolution API (tensor, filter and convolution descriptors, then
// cudnnConvolutionForward / BackwardData / BackwardFilter). cuDNN 9 marks it deprecated but has
// not removed it, and it covers everything the benchmark needs - grouped and depthwise, 2-D and
// 3-D, strided, dilated, both memory layouts, fp32 / tf32 / fp16 / bf16, data and filter
// gradients - with one short call sequence per direction and an explicit math type (FMA vs
// tensor ops) per call, which is how "float32 without TF32" is guaranteed. The graph API, its
// successor and what PyTorch runs, is the alternative behind the same interface (`--cudnn-api
// graph`, cudnn_graph.hpp): its engines come from cuDNN's heuristics and are filtered by their
// notes to the same rules.
//
// Algorithms: `heuristic` takes the first result of cudnnGet*Algorithm_v7 that is supported,
// fits the workspace limit, (float32) uses FMA math and (deterministic mode) is deterministic; `find` runs
// cudnnFind*AlgorithmEx once per problem on scratch buffers, outside any measured loop, and takes the fastest that
// fits. Either way the choice is cached per problem (shapes, strides, groups, window, dtype), with the other candidates
// in cuDNN's order behind it: when the chosen algorithm fails at execution, the next one that fits the same workspace
// runs instead and is kept (conv_algo_fallback.hpp).
#pragma once

#include <cudnn.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/cuda/conv_algo_fallback.hpp"
#include "backends/cuda/conv_problem.hpp"
#include "backends/cuda/cudnn_graph.hpp"

namespace convbench::cuda {

enum class CudnnAlgoMode { heuristic, find };
std::string_view to_string(CudnnAlgoMode mode);
std::optional<CudnnAlgoMode> parse_cudnn_algo_mode(std::string_view name);

// cuDNN's data type for a storage dtype (float32 and tf32 are both float); throws for others.
cudnnDataType_t cudnn_data_type(DType dtype);
// The math type a convolution in `dtype` is allowed: FMA only for float32 (no TF32), tensor ops
// for tf32 (TF32 allowed) and for float16 / bfloat16 (which accumulate in float either way:
// the compute type is always CUDNN_DATA_FLOAT).
cudnnMathType_t requested_math(DType dtype);

// The algorithm chosen for one direction of one problem, and what running it needs.
struct ConvAlgoChoice {
  ConvDirection direction = ConvDirection::forward;
  int algo = 0;  // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t value: the one that runs
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  bool deterministic = true;
  int64_t workspace_bytes = 0;  // exactly what the call is given (the first choice's need)
  float find_ms = -1.0f;        // cudnnFind's own timing of it (find mode only)
  // The algorithms that failed at execution before this one ran, each "ALGO (MATH): why".
  std::vector<std::string> fallback_from;
  // Find mode only: what cudnnFind returned when none of it was usable ("8 returned, none usable:
  // ALGO (MATH): status, ..."); the choice then comes from the heuristic's order.
  std::string find_found_none;
  // Each result cuDNN returned and convbench did not take, "ALGO (MATH): why": its status, TF32
  // math for float32, or nondeterministic in deterministic mode.
  std::vector<std::string> rejected;
  // The graph API's choice (`--cudnn-api graph`): the engine that runs, "engine 12 (tensor
  // cores)"; `algo` is then its index among the direction's plans and `math` is not used.
  std::string engine;
};
// "IMPLICIT_PRECOMP_GEMM", "ALGO_1", ... (the enum name without its direction prefix).
std::string algo_name(ConvDirection direction, int algo);
std::string_view math_name(cudnnMathType_t math);
// "IMPLICIT_GEMM (TENSOR_OP_MATH)": how messages and op details name a candidate.
std::string algo_and_math_name(ConvDirection direction, int algo, cudnnMathType_t math);
nlohmann::json to_json(const ConvAlgoChoice& choice);

class CudnnConv {
 public:
  // `release_memory` is called to free cached device memory when find mode's scratch buffers do
  // not fit; `workspace_limit_bytes` caps the workspace of any chosen algorithm; `deterministic`
  // keeps only cuDNN's deterministic algorithms where it has one (prefer_deterministic).
  // `api`: the legacy API (the default) or the graph API (cudnn_graph.hpp), which chooses by
  // cuDNN's heuristics only: with find mode it throws std::invalid_argument.
  CudnnConv(cudnnHandle_t handle, CudnnAlgoMode mode, int64_t workspace_limit_bytes,
            std::function<void()> release_memory, bool deterministic = false, CudnnApi api = CudnnApi::legacy);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  CudnnAlgoMode mode() const { return mode_; }
  int64_t workspace_limit() const { return workspace_limit_; }
  bool deterministic() const { return deterministic_; }
  CudnnApi api() const { return api_; }

  // The algorithm for `direction` of `problem`, chosen on first use and cached.
  const ConvAlgoChoice& choose(const ConvProblem& problem, ConvDirection direction);

  // Each call overwrites its output (beta = 0). The filter `w` / `dw` is in the activations'
  // memory order (see weight_in_layout_order); `workspace` holds choose(...).workspace_bytes.
  void forward(const ConvProblem& problem, const void* x, const void* w, void* y, void* workspace);
  void backward_data(const ConvProblem& problem, const void* w, const void* dy, void* dx, void* workspace);
  void backward_filter(const ConvProblem& problem, const void* x, const void* dy, void* dw, void* workspace);

  // `--conv-fusion` (backends/conv_fusion.hpp; graph API only): the fused forward's choice for
  // `problem` with `epilogue`, made on first use and cached, or nullptr when cuDNN offers no
  // usable fused engine or the fused call failed at execution before (the conv then runs
  // unfused); fused_unavailable() says why.
  const ConvAlgoChoice* choose_fused(const ConvProblem& problem, const ConvEpilogue& epilogue);
  std::string fused_unavailable(const ConvProblem& problem, const ConvEpilogue& epilogue);
  // y = act(conv(x, w) + bias) in one cuDNN call (bias nullptr when the epilogue has none); for a
  // bn_statistics epilogue y = conv(x, w) + bias and, per channel c, sum[c] and sqsum[c] of y
  // (C floats each, nullptr for other epilogues). False
  // when no fused engine ran: none was offered, or every one failed at execution (recorded, so
  // that later calls do not try again); the caller then runs the conv unfused. Throws for a
  // failure no engine can cure (a broken CUDA context), as the unfused calls do.
  bool forward_fused(const ConvProblem& problem, const ConvEpilogue& epilogue, const void* x, const void* w,
                     const void* bias, void* y, void* workspace, void* sum = nullptr, void* sqsum = nullptr);

 private:
  struct Plan;
  struct DirectionPlan;
  struct FusedPlan;
  FusedPlan& fused_plan(Plan& plan, const ConvEpilogue& epilogue);
  Plan& plan(const ConvProblem& problem);
  DirectionPlan& direction_plan(Plan& plan, ConvDirection direction);
  DirectionPlan select(Plan& plan, ConvDirection direction);
  DirectionPlan select_graph(Plan& plan, ConvDirection direction);
  int64_t find_workspace_bytes(Plan& plan, ConvDirection direction);
  // Runs `call` (one cuDNN call of `direction`, given an algorithm and the workspace size) with
  // the chosen algorithm, falling back to the next candidates when it fails.
  void execute(Plan& plan, DirectionPlan& direction_plan, const ConvProblem& problem, ConvDirection direction,
               const std::function<cudnnStatus_t(const ConvAlgoCandidate&, size_t workspace_bytes)>& call);

  cudnnHandle_t handle_;
  CudnnAlgoMode mode_;
  int64_t workspace_limit_;
  std::function<void()> release_memory_;
  bool deterministic_;
  CudnnApi api_;
  std::unordered_map<ConvProblem, std::unique_ptr<Plan>, CudnnProblemHash, SameCudnnProblem> plans_;
};

}  // namespace convbench::cuda

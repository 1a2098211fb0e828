// cuDNN's graph (backend) API for one direction of one convolution, as PyTorch runs its
// convolutions (ATen's cudnn/Conv_v8.cpp): an operation graph of one convolution node, the
// engine configurations cuDNN's heuristics give (mode A, then its fallback list), filtered by
// their notes, each finalized into an execution plan, executed with a variant pack. CudnnConv
// (cudnn_conv.hpp) uses it under `--cudnn-api graph`; the legacy API stays the default until a
// GPU run has compared the two (scripts/gpu-check.sh --stages "build ab").
//
// Written against the backend API in cuDNN's own headers (cudnn_graph.h), not NVIDIA's
// cudnn-frontend: no registry package carries the frontend headers, and the backend API is what
// the frontend wraps.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/conv_fusion.hpp"
#include "backends/cuda/conv_problem.hpp"

namespace convbench::cuda {

// `--cudnn-api legacy|graph`.
enum class CudnnApi { legacy, graph };
std::string_view to_string(CudnnApi api);
std::optional<CudnnApi> parse_cudnn_api(std::string_view name);

// What an engine's numerical notes say that convbench filters on.
struct EngineNotes {
  bool tensor_core = false;                  // runs on tensor cores (TF32 for float inputs)
  bool down_convert_inputs = false;          // converts its inputs to a narrower type first
  bool reduced_precision_reduction = false;  // accumulates in the storage type, not float
  bool nondeterministic = false;             // two runs may differ in their last bits
};

// Why convbench does not run an engine with these notes for `dtype`, or nullopt when it may:
// float32 not on tensor cores (TF32), no dtype on down-converted inputs, and in deterministic
// mode no engine that is nondeterministic. PyTorch's filter of its v8 convolutions, rule for
// rule (so that both engines choose among the same engines): a reduced-precision reduction is
// allowed, as PyTorch allows it (rejecting it left some float16 and bfloat16 problems with no
// engine at all); the engine's name in op details says so.
std::optional<std::string> engine_rejection(const EngineNotes& notes, DType dtype, bool deterministic);

// The unique ids the graph gives cuDNN's x, w and y (for every direction; gradients take the
// id of the tensor whose gradient they are).
inline constexpr int64_t kGraphX = 1, kGraphW = 2, kGraphY = 3;
// A fused forward's bias (backends/conv_fusion.hpp), and the virtual tensors between its operations
// (never in memory: the engine keeps them in registers).
inline constexpr int64_t kGraphBias = 4, kGraphConvOut = 5, kGraphBiased = 6;
// A statistics graph's per-channel sum and sum of squares of y (conv_bn_stats), float.
inline constexpr int64_t kGraphSum = 7, kGraphSqSum = 8;

class BackendDescriptor;

// One direction of one problem as finalized execution plans, best first.
class GraphConvPlans {
 public:
  struct Candidate {
    std::shared_ptr<BackendDescriptor> plan;
    int64_t engine = -1;  // cuDNN's global engine index
    int64_t workspace_bytes = 0;
    bool deterministic = true;
    std::string name;  // "engine 12 (tensor cores)", for op details and messages
  };
  // Builds the graph and its candidates. Candidates whose notes are rejected, that do not
  // finalize, or that need more than `workspace_limit` bytes are left out and listed in
  // rejected(). Throws std::runtime_error (file:line) when a descriptor cannot be built at all.
  GraphConvPlans(cudnnHandle_t handle, const ConvProblem& problem, ConvDirection direction, bool deterministic,
                 int64_t workspace_limit);
  // A forward convolution with `epilogue` fused (backends/conv_fusion.hpp): the convolution into a
  // virtual float tensor, the bias added (a pointwise add broadcasting the (1, C, 1, ...)
  // bias), the activation (a pointwise RELU_FWD, with its lower clip slope for leaky_relu, or
  // SIGMOID_FWD), and y written once. A bn_statistics epilogue (conv_bn_stats): the convolution
  // (and its bias) into y, then a GENSTATS operation writing y's per-channel sum and sum of
  // squares in float. Only runtime-fusion engines take such a graph; where none does (or every
  // one is rejected) candidates() is empty and rejected() says why.
  GraphConvPlans(cudnnHandle_t handle, const ConvProblem& problem, const ConvEpilogue& epilogue, bool deterministic,
                 int64_t workspace_limit);
  ~GraphConvPlans();
  GraphConvPlans(const GraphConvPlans&) = delete;
  GraphConvPlans& operator=(const GraphConvPlans&) = delete;

  const std::vector<Candidate>& candidates() const { return candidates_; }
  const std::vector<std::string>& rejected() const { return rejected_; }
  // Runs candidate `index` on x, w and y (the direction's inputs and output among them) with
  // `workspace` (at least the candidate's workspace_bytes). Returns cuDNN's status: the caller
  // falls back to the next candidate when it fails.
  // `bias`: the fused forward's bias (nullptr for every other graph); `sum`, `sqsum`: a
  // statistics graph's C floats each (nullptr for every other graph).
  cudnnStatus_t execute(cudnnHandle_t handle, size_t index, const void* x, const void* w, const void* y,
                        void* workspace, const void* bias = nullptr, void* sum = nullptr, void* sqsum = nullptr) const;

 private:
  // cuDNN's heuristics (mode A, then the fallback list) for the finalized operation graph: each
  // engine once, filtered by engine_rejection() for `dtype`, finalized into a plan within
  // `workspace_limit`.
  void add_candidates(cudnnHandle_t handle, const std::shared_ptr<BackendDescriptor>& graph, DType dtype,
                      bool deterministic, int64_t workspace_limit);
  // A fused graph of `ops` finalized, then its candidates (or why there are none).
  void finalize_fused(cudnnHandle_t handle, const std::vector<std::shared_ptr<BackendDescriptor>>& ops, DType dtype,
                      bool deterministic, int64_t workspace_limit);
  bool has_bias_ = false;
  bool has_statistics_ = false;
  // Plans finalized per problem and direction: the first that runs and two fallbacks. Every engine
  // of a fused graph, and some plain float16/bfloat16 ones, compile with NVRTC when finalized
  // (0.3-2 s each); finalizing every engine the heuristics list cost tens of seconds a problem.
  static constexpr size_t kMaxPlans = 3;
  std::vector<Candidate> candidates_;
  std::vector<std::string> rejected_;
  // The graph's descriptors and the engine configurations the plans were made from, kept for the
  // plans' lifetime.
  std::vector<std::shared_ptr<BackendDescriptor>> keep_alive_;
};

}  // namespace convbench::cuda

// The CUDA backend: cuDNN convolutions (cudnn_conv.hpp) and convbench's own kernels (kernels/)
// for every other op, forward and backward, all queued on one non-default stream that the cuDNN
// handle is bound to. Memory comes from a caching device allocator with the same statistics as
// the host backends; scratch space comes only from the workspace the executor allocates, sized
// by workspace_bytes(), so that the memory model predicts this backend byte for byte too.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "backends/cuda/cublas_linear.hpp"
#include "backends/cuda/cuda_caching_allocator.hpp"
#include "backends/cuda/cuda_measurement.hpp"
#include "backends/cuda/cudnn_conv.hpp"
#include "backends/cuda/depthwise_conv_cuda.hpp"
#include "backends/cuda/first_launch_start.hpp"
#include "runtime/backend.hpp"

struct CUstream_st;

namespace convbench::cuda {

struct CudaBackendOptions {
  CudnnAlgoMode cudnn_algo = CudnnAlgoMode::heuristic;
  // cuDNN's legacy API or its graph API (cudnn_graph.hpp) for the convolutions.
  CudnnApi cudnn_api = CudnnApi::legacy;
  // A conv and the in-place activation after it as one fused cuDNN call, and (training) a conv
  // that also writes its output's per-channel sums for the batch norm after it
  // (backends/conv_fusion.hpp).
  ConvFusion conv_fusion = ConvFusion::none;
  // Largest workspace any one cuDNN call may use (an algorithm needing more is skipped).
  int64_t workspace_limit_bytes = int64_t{1} << 30;
  // Cap on the allocator's reserved bytes (0: the device's memory is the only limit).
  int64_t memory_limit_bytes = 0;
  // Only cuDNN's deterministic algorithms, where it has one for the problem (prefer_deterministic
  // in conv_algo_fallback.hpp): two runs of a step then write the same bits, except through an
  // op cuda_nondeterministic_reason() names. For tests that compare steps bit for bit; off by
  // default, as in PyTorch (torch.backends.cudnn.deterministic), since it can cost speed.
  bool deterministic = false;
  // Which depthwise convs convbench's own kernels run instead of cuDNN (depthwise_conv_cuda.hpp).
  DepthwiseConvPath depthwise_conv = DepthwiseConvPath::automatic;
  // Who computes the linear op's products (linear_gemm.hpp): auto is cuBLAS where it is built.
  LinearPath linear = LinearPath::automatic;
};

// Why two runs of `op` on the CUDA backend may differ in their last bits even in deterministic
// mode (a kernel that adds with atomics, in an order the scheduler picks), or nullopt. Needs no
// GPU. Convolutions are not named here: whether cuDNN had a deterministic algorithm for one is
// in its op details ("deterministic" per direction).
std::optional<std::string> cuda_nondeterministic_reason(const Graph& graph, const Op& op, bool training);

// Why the CUDA backend cannot run `op` (float64, more than 2^31 elements in a tensor, mixed
// dtypes or layouts within the op, ...), or nullopt. Needs no GPU.
std::optional<std::string> cuda_unsupported_reason(const Graph& graph, const Op& op);

// Workspace bytes of an op in a phase that do not depend on cuDNN's algorithm choice (every op
// but conv and conv_transpose, whose bytes come from CudaBackend::workspace_bytes). Needs no GPU.
int64_t kernel_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training);

class CudaBackend final : public Backend {
 public:
  // Throws std::runtime_error naming the reason when no usable GPU is present.
  explicit CudaBackend(CudaBackendOptions options = {});
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  Allocator& allocator() override { return allocator_; }

  // cuda_unsupported_reason(): float64, more than 2^31 elements, mixed dtypes or layouts, ...
  std::optional<std::string> limitation(const Graph& graph, const Op& op) const override;
  // Every op kind: cuDNN for convolutions, kernels/ for the rest (register_kernels()).
  const KernelTable& kernels() const override { return kernels_; }
  // Convolutions: cuDNN's workspace for the chosen algorithms (the largest of the directions the
  // phase runs: data and filter gradients run one after another), plus room for the weight in
  // the activations' memory order when it is not stored that way. Chooses the algorithms on the
  // first query (find mode runs cudnnFind here). Other ops: their reductions' partial results.
  int64_t workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training) override;
  // --conv-fusion conv_bn_stats: the batch norm after a conv cuDNN runs (not convbench's own
  // depthwise kernels), when the graph's rule allows it (conv_bn_stats_fusion).
  int fills_statistics_of(const Graph& graph, int index) const override;

  // Each op in an NVTX range ("op NAME fwd"), its first launch marked for eager timing.
  void forward(const ForwardCall& call) override;
  void backward(const BackwardCall& call) override;

  void accumulate(Tensor& dst, const Tensor& src) override;
  void add(Tensor& out, const Tensor& a, const Tensor& b) override;
  // GradScaler's scale and unscale_ (kernels/elementwise.cu): the found-inf flag stays on the
  // device until every gradient is unscaled, then one copy reads it, as GradScaler's step does.
  void scale(Tensor& out, const Tensor& in, double factor) override;
  bool unscale(const std::vector<Tensor*>& grads, double factor, Tensor& flags) override;

  void copy_from_host(Tensor& dst, const void* src) override;
  void copy_to_host(const Tensor& src, void* dst) override;
  // cudaStreamSynchronize on the backend's stream.
  void synchronize() override;

  // The stream every kernel and cuDNN call of this backend runs on (for EventTimer).
  CUstream_st* stream() const { return stream_; }
  const CudaBackendOptions& options() const { return options_; }

  // For each conv op run since clear_op_details(), keyed by op name: the cuDNN API, algorithm
  // mode, and per direction the algorithm, math type, determinism and workspace bytes, e.g.
  // {"conv1": {"api": "cudnn-legacy", "mode": "heuristic", "weight_layout_conversion": false,
  //            "forward": {"algo": "IMPLICIT_PRECOMP_GEMM", "math": "FMA_MATH", ...}}}.
  nlohmann::json op_details() const override { return details_; }
  void clear_op_details() override {
    details_ = nlohmann::json::object();
    recorded_.clear();
    fusion_recorded_.clear();
  }
  // CUDA events, the L2 scrub, NVTX ranges, the NVML clock, CUDA graphs (cuda_measurement.hpp).
  DeviceMeasurement& measurement() override { return *measurement_; }

  // Sets every element of a floating-point tensor to `value` on the device.
  void fill(Tensor& t, double value);

 private:
  void register_kernels();
  // conv, conv_transpose, and a folded_conv's conv (its call's params: the computed kernel).
  void conv_forward(const ForwardCall& call);
  void conv_backward(const BackwardCall& call);
  int64_t conv_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training);
  // folded_conv (fold_cuda.cpp): the fold program's kernels (kernels/fold.cu), then the conv.
  void folded_conv_forward(const ForwardCall& call);
  void folded_conv_backward(const BackwardCall& call);
  int64_t folded_conv_workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training);
  void record(const Op& op, const ConvProblem& problem, ConvDirection direction);
  // --conv-fusion conv_act (backends/conv_fusion.hpp): the epilogue conv `op` takes over from the
  // activation after it, or nullopt (fusion off, a conv convbench's own depthwise kernels run,
  // or the graph's rule says no). The conv then applies it, fused when cuDNN has an engine for
  // it and with the activation's kernel after its own otherwise; either way the activation op
  // itself runs nothing (activation_taken_by_conv).
  std::optional<ConvEpilogue> taken_epilogue(const Graph& graph, const Op& op) const;
  // --conv-fusion conv_bn_stats: the statistics epilogue of conv `op` in a training step, or
  // nullopt. The conv then writes its output's sums into the batch norm's saved statistics,
  // fused when cuDNN has an engine for it (the batch norm then finishes them: sums_ready_for_);
  // otherwise it runs unfused and the batch norm computes its statistics itself.
  std::optional<ConvEpilogue> statistics_epilogue(const Graph& graph, const Op& op, bool training) const;
  // Either fused epilogue conv `op` runs with, or nullopt.
  std::optional<ConvEpilogue> fused_epilogue(const Graph& graph, const Op& op, bool training) const;
  bool activation_taken_by_conv(const Graph& graph, const Op& op) const;
  // The cuDNN scratch of the fused forward with `epilogue` (choosing its engine on first use), or 0.
  int64_t fused_workspace_bytes(const ConvProblem& problem, const std::optional<ConvEpilogue>& epilogue);
  // The conv's op details under fusion: the fused call's engine, or why it did not run fused.
  void record_fusion(const Graph& graph, const Op& op, const ConvProblem& problem, const ConvEpilogue& epilogue,
                     bool fused);

  CudaBackendOptions options_;
  CUstream_st* stream_ = nullptr;
  cudnnHandle_t handle_ = nullptr;
  CudaCachingAllocator allocator_;
  std::unique_ptr<CudnnConv> conv_;
  std::unique_ptr<CublasLinear> cublas_;  // null: the linear op runs convbench's kernels
  FirstLaunchStart first_launch_;
  std::unique_ptr<CudaMeasurement> measurement_;
  KernelTable kernels_;
  nlohmann::json details_ = nlohmann::json::object();
  // What details_ holds per conv op and direction (index: ConvDirection): the algorithm, math and
  // fallback count written, so that a call whose choice is unchanged writes no JSON.
  struct Recorded {
    int algo = -1;
    int math = -1;
    size_t fallbacks = 0;
  };
  std::unordered_map<std::string, std::array<Recorded, 3>> recorded_;
  // Per conv op under fusion: whether details_ says it ran fused (true) or unfused (false).
  std::unordered_map<std::string, bool> fusion_recorded_;
  // Per-op NVTX ranges only when a tool listens (nvtx_range.hpp).
  bool nvtx_ops_ = false;
  // The index of the batch norm whose saved statistics the conv just before it filled with sums
  // (a fused conv_bn_stats call), or -1; that batch norm's forward finishes them and resets it.
  int sums_ready_for_ = -1;
};

}  // namespace convbench::cuda

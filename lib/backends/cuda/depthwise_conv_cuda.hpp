// Depthwise convolutions on the CUDA backend: which ones convbench's own kernels
// (kernels/depthwise_conv.cu) run instead of cuDNN (`--depthwise-conv`), and their forward and
// backward. The choice is host logic, testable without a GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "runtime/backend.hpp"

namespace convbench::kernels {
struct DepthwiseShape;  // kernels/kernels.hpp, which only the backend's sources see by that path
}

namespace convbench::cuda {

// `--depthwise-conv auto|own|cudnn`. auto: the own kernels for channels-first depthwise convs and
// cuDNN for channels-last ones, which is how PyTorch eager dispatches them (ATen's
// conv_depthwise2d / conv_depthwise3d kernels, and cuDNN whenever it suggests channels-last).
// It is the rule until a GPU run has measured both paths on the seeds' shapes; `own` and `cudnn`
// force one path, so that one run compares them (lib/backends/README.md, "Depthwise convolutions").
enum class DepthwiseConvPath { automatic, own, cudnn };
std::string_view to_string(DepthwiseConvPath path);  // "auto", "own", "cudnn"
std::optional<DepthwiseConvPath> parse_depthwise_conv_path(std::string_view name);

// Whether the own kernels can run `op`: a conv (not transposed, not folded) whose groups equal
// its input channels, with a whole number of output channels per input channel, 2 or 3 spatial
// dims, in a float dtype the kernels store (float32, tf32, float16, bfloat16).
bool is_depthwise_conv(const Graph& graph, const Op& op);
// Whether they do under `path` (see DepthwiseConvPath).
bool runs_own_depthwise(const Graph& graph, const Op& op, DepthwiseConvPath path);
// The kernels' description of a depthwise conv op (include kernels/kernels.hpp to call it).
kernels::DepthwiseShape depthwise_shape(const Graph& graph, const Op& op);
// Workspace of a phase: the weight gradient's chunk sums in backward (none for a frozen conv);
// the bias gradient runs after them and reuses the same bytes.
int64_t own_depthwise_workspace_bytes(const Graph& graph, const Op& op, Phase phase);

void own_depthwise_forward(const ForwardCall& call, cudaStream_t stream);
void own_depthwise_backward(const BackwardCall& call, cudaStream_t stream);
// What op details record for an op the own kernels ran: {"api": "convbench-depthwise", ...}.
nlohmann::json own_depthwise_details(const Graph& graph, const Op& op, DepthwiseConvPath path);

}  // namespace convbench::cuda

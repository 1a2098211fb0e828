// Falling back to cuDNN's next algorithm when the chosen one fails at execution.
//
// cuDNN's heuristics and cudnnFind only predict: an algorithm they offer can still refuse at run
// time for some combination of layout, dtype, groups and dilation, or fail to get memory. As
// PyTorch does, convbench then tries the next candidate in cuDNN's order, and keeps the one that
// ran for the later calls. Only candidates that fit the workspace the executor already allocated
// are tried (the memory model predicted that workspace, so it cannot grow in the middle of a
// step); those that need more are skipped and named. When none runs the op is unsupported here,
// and every candidate's failure is in the message (or out of memory, when memory was all that
// failed). This file holds the decisions, not the cuDNN calls, so host tests can drive it.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/conv_problem.hpp"

namespace convbench::cuda {

// One algorithm cuDNN offers for a direction of a problem, in its order of preference.
struct ConvAlgoCandidate {
  int algo = 0;  // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t value
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  bool deterministic = true;
  int64_t workspace_bytes = 0;  // what this algorithm itself asks for
  float find_ms = -1.0f;        // cudnnFind's own timing of it (find mode only)
  // The graph API's candidates (cudnn_graph.hpp): its name ("engine 12 (tensor cores)"); `algo`
  // is then its index among the direction's execution plans. Empty for the legacy API's.
  std::string name;
};

// Deterministic mode (CudaBackendOptions::deterministic): only the candidates cuDNN marks
// CUDNN_DETERMINISTIC, in their order, when there is one; `dropped` gets "ALGO (MATH):
// nondeterministic" for each candidate left out. When cuDNN offers no deterministic algorithm
// for the problem, every candidate stays (the choice then records deterministic: false) rather
// than refusing a convolution that runs: a caller that needs bit-identical steps reads that.
std::vector<ConvAlgoCandidate> prefer_deterministic(std::vector<ConvAlgoCandidate> candidates, ConvDirection direction,
                                                    std::vector<std::string>& dropped);

// Whether a failed cuDNN call may succeed with another algorithm: not supported for this
// problem, failed while executing, an internal or allocation failure, or too little workspace.
// Other failures (a bad parameter, an uninitialised handle) are convbench's bugs: no retry.
bool another_algorithm_may_work(cudnnStatus_t status);

// The outcome of a call that went through the fallback.
struct FallbackResult {
  size_t ran = 0;                     // index of the candidate that ran
  std::vector<std::string> failures;  // "ALGO (MATH): why" for each candidate tried before it
};

struct FallbackCalls {
  // Runs the call with one candidate (math type set, the given workspace) and returns cuDNN's status.
  std::function<cudnnStatus_t(const ConvAlgoCandidate&)> attempt;
  // cuDNN's text for a failed status ("CUDNN_STATUS_NOT_SUPPORTED_LAYOUT: ...").
  std::function<std::string(cudnnStatus_t)> describe;
  // After an execution failure: why the CUDA context can no longer run anything (a sticky
  // error such as an illegal address), or nullopt. Then no other algorithm is tried.
  std::function<std::optional<std::string>()> context_broken;
};

// Tries candidates[first], then the later ones that need at most `workspace_bytes`, until one
// runs. Throws UnsupportedOp naming every failure when none does (CudaOutOfMemory when every
// failure was a memory failure), std::runtime_error right away for a failure no other algorithm
// can cure, or when the CUDA context broke. `what` names the call for the messages, e.g.
// "forward float16 channels_last convolution"; it is called only when a message is written, so
// that a call that runs builds no text (it is on the hot path of every convolution).
FallbackResult run_with_fallback(const std::vector<ConvAlgoCandidate>& candidates, size_t first,
                                 int64_t workspace_bytes, ConvDirection direction,
                                 const std::function<std::string()>& what, const FallbackCalls& calls);

}  // namespace convbench::cuda

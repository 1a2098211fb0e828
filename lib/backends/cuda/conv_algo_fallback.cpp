#include "backends/cuda/conv_algo_fallback.hpp"

#include <algorithm>
#include <stdexcept>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cudnn_conv.hpp"
#include "runtime/backend.hpp"

namespace convbench::cuda {

bool another_algorithm_may_work(cudnnStatus_t status) {
  switch (CUDNN_STATUS_CATEGORY(status)) {
    case CUDNN_STATUS_NOT_SUPPORTED:
    case CUDNN_STATUS_INTERNAL_ERROR:  // allocation, compilation and launch failures included
    case CUDNN_STATUS_EXECUTION_FAILED: return true;
    default: return status == CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT;  // workspace too small
  }
}

std::vector<ConvAlgoCandidate> prefer_deterministic(std::vector<ConvAlgoCandidate> candidates, ConvDirection direction,
                                                    std::vector<std::string>& dropped) {
  const bool any = std::any_of(candidates.begin(), candidates.end(), [](const auto& c) { return c.deterministic; });
  if (!any) return candidates;
  std::vector<ConvAlgoCandidate> kept;
  for (const ConvAlgoCandidate& c : candidates) {
    if (c.deterministic)
      kept.push_back(c);
    else
      dropped.push_back(algo_and_math_name(direction, c.algo, c.math) + ": nondeterministic");
  }
  return kept;
}

FallbackResult run_with_fallback(const std::vector<ConvAlgoCandidate>& candidates, size_t first,
                                 int64_t workspace_bytes, ConvDirection direction,
                                 const std::function<std::string()>& what, const FallbackCalls& calls) {
  FallbackResult result;
  bool only_memory = true;
  auto name = [direction](const ConvAlgoCandidate& c) {
    return c.name.empty() ? algo_and_math_name(direction, c.algo, c.math) : c.name;
  };
  for (size_t i = first; i < candidates.size(); ++i) {
    const ConvAlgoCandidate& c = candidates[i];
    if (i > first && c.workspace_bytes > workspace_bytes) {
      result.failures.push_back(name(c) + ": not tried, needs " + std::to_string(c.workspace_bytes) +
                                " bytes of workspace, " + std::to_string(workspace_bytes) + " allocated");
      only_memory = false;
      continue;
    }
    const cudnnStatus_t status = calls.attempt(c);
    if (status == CUDNN_STATUS_SUCCESS) {
      result.ran = i;
      return result;
    }
    const std::string failure = name(c) + ": " + calls.describe(status);
    if (!another_algorithm_may_work(status))
      throw std::runtime_error("cuda backend: cuDNN " + what() + " failed with " + failure);
    if (CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_EXECUTION_FAILED) {
      if (const std::optional<std::string> broken = calls.context_broken())
        throw std::runtime_error("cuda backend: cuDNN " + what() + " failed with " + failure +
                                 ", and the CUDA context is broken (" + *broken + "): no other algorithm can run");
    }
    only_memory = only_memory && is_out_of_memory(status);
    result.failures.push_back(failure);
  }
  std::string message = "cuda backend: no cuDNN algorithm runs this " + what() + " (" +
                        std::to_string(result.failures.size()) + " tried): ";
  for (size_t i = 0; i < result.failures.size(); ++i) message += (i ? "; " : "") + result.failures[i];
  if (only_memory && !result.failures.empty()) throw CudaOutOfMemory(message);
  throw UnsupportedOp(message);
}

}  // namespace convbench::cuda

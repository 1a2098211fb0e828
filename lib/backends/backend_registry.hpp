// Creating backends by name, and choosing one for `--device auto`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.hpp"

namespace convbench {

struct DeviceChoice {
  std::string device;  // reference | cpu | cuda
  std::string reason;  // why auto chose it (empty when named explicitly)
};

// The devices `--device` may name, in the order --help and messages list them: every backend
// make_backend knows, whether or not this build has it (`--device cuda` in a build without CUDA
// says why it cannot run). `auto` is not one of them: choose_device resolves it to one. The
// option checks and the messages read this list, so a new backend is named here once.
const std::vector<std::string>& device_names();

// Resolves "auto" (cuda when built and a GPU is present, else cpu); throws
// std::invalid_argument with a clear message when the named device cannot be used.
DeviceChoice choose_device(const std::string& requested);
struct BackendOptions {
  std::string cudnn_algo = "heuristic";  // cuda: heuristic | find
  std::string cudnn_api = "legacy";      // cuda: legacy | graph (backends/cuda/cudnn_graph.hpp)
  std::string conv_fusion = "none";      // none | conv_act (cpu, cuda) | conv_bn_stats | all (cuda); conv_fusion.hpp
  std::string depthwise_conv = "auto";   // cuda: auto | own | cudnn (backends/cuda/depthwise_conv_cuda.hpp)
  std::string linear = "auto";           // cuda: auto | own | cublas (backends/cuda/linear_gemm.hpp)
  int64_t memory_limit_bytes = 0;        // 0: no limit beyond the device's own
  // Threads of the host backends (OpenMP, which oneDNN also uses); 0 keeps OpenMP's default
  // (OMP_NUM_THREADS, else one per CPU the process may use).
  int threads = 0;
};

std::unique_ptr<Backend> make_backend(const std::string& device, const BackendOptions& options = {});

}  // namespace convbench

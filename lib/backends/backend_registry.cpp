#include "backends/backend_registry.hpp"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "backends/conv_fusion.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/reference/reference_backend.hpp"
#include "build_info.hpp"
#if CONVBENCH_WITH_CUDA
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_device.hpp"
#endif

namespace convbench {

const std::vector<std::string>& device_names() {
  static const std::vector<std::string> names = {"cpu", "reference", "cuda"};
  return names;
}

DeviceChoice choose_device(const std::string& requested) {
  if (requested == "cuda") {
    if (!build_info::with_cuda)
      throw std::invalid_argument(
          "cuda: this convbench was built without the CUDA backend "
          "(configure with CUDA and cuDNN present, see lib/backends/README.md)");
#if CONVBENCH_WITH_CUDA
    if (const auto why = cuda::cuda_unavailable_reason()) throw std::invalid_argument("cuda: " + *why);
#endif
    return {"cuda", ""};
  }
  if (requested == "auto") {
    if (!build_info::with_cuda) return {"cpu", "auto: the CUDA backend is not built, using cpu (oneDNN)"};
#if CONVBENCH_WITH_CUDA
    if (const auto why = cuda::cuda_unavailable_reason()) return {"cpu", "auto: " + *why + ", using cpu (oneDNN)"};
    return {"cuda", "auto: using the GPU (cuda)"};
#else
    return {"cpu", "auto: no usable GPU, using cpu (oneDNN)"};
#endif
  }
  // Every other device is a host backend, always usable.
  const std::vector<std::string>& names = device_names();
  if (std::find(names.begin(), names.end(), requested) != names.end()) return {requested, ""};
  std::string choices = "auto";
  for (size_t i = 0; i < names.size(); ++i) choices += (i + 1 < names.size() ? ", " : " or ") + names[i];
  throw std::invalid_argument("must be " + choices + ", got \"" + requested + "\"");
}

std::unique_ptr<Backend> make_backend(const std::string& device, const BackendOptions& options) {
  if (options.cudnn_algo != "heuristic" && options.cudnn_algo != "find")
    throw std::invalid_argument("--cudnn-algo must be heuristic or find, got \"" + options.cudnn_algo + "\"");
  if (options.cudnn_api != "legacy" && options.cudnn_api != "graph")
    throw std::invalid_argument("--cudnn-api must be legacy or graph, got \"" + options.cudnn_api + "\"");
  if (options.cudnn_api == "graph" && options.cudnn_algo == "find")
    throw std::invalid_argument(
        "--cudnn-api graph chooses engines by cuDNN's heuristics; --cudnn-algo find times the legacy API's "
        "algorithms: use one or the other");
  const std::optional<ConvFusion> fusion = parse_conv_fusion(options.conv_fusion);
  if (!fusion)
    throw std::invalid_argument("--conv-fusion must be none, conv_act, conv_bn_stats or all, got \"" +
                                options.conv_fusion + "\"");
  if (*fusion != ConvFusion::none && device == "reference")
    throw std::invalid_argument("--conv-fusion " + options.conv_fusion +
                                ": the reference backend runs every op apart (cpu fuses through oneDNN's post-ops, "
                                "cuda through cuDNN's fused engines)");
  if (fuses_bn_statistics(*fusion) && device == "cpu")
    throw std::invalid_argument("--conv-fusion " + options.conv_fusion +
                                ": cpu has no conv that also writes its output's per-channel sums (oneDNN has no such "
                                "post-op); conv_bn_stats is cuDNN's GENSTATS fusion, on cuda");
  if (*fusion != ConvFusion::none && device == "cuda" && options.cudnn_api != "graph")
    throw std::invalid_argument(
        "--conv-fusion " + options.conv_fusion +
        " on cuda runs cuDNN's fused engines, which only its graph API has: add --cudnn-api graph");
  if (options.depthwise_conv != "auto" && options.depthwise_conv != "own" && options.depthwise_conv != "cudnn")
    throw std::invalid_argument("--depthwise-conv must be auto, own or cudnn, got \"" + options.depthwise_conv + "\"");
  if (options.linear != "auto" && options.linear != "own" && options.linear != "cublas")
    throw std::invalid_argument("--linear must be auto, own or cublas, got \"" + options.linear + "\"");
  if (options.threads < 0) throw std::invalid_argument("--threads must be at least 1");
  // The options that choose among cuDNN's and convbench's CUDA paths change nothing on a host
  // backend: accepted quietly there, a run would look like an A/B that never happened.
  if (device != "cuda") {
    for (const auto& [flag, value, fallback] : {std::tuple{"--cudnn-algo", options.cudnn_algo, "heuristic"},
                                                std::tuple{"--cudnn-api", options.cudnn_api, "legacy"},
                                                std::tuple{"--depthwise-conv", options.depthwise_conv, "auto"},
                                                std::tuple{"--linear", options.linear, "auto"}})
      if (value != fallback)
        throw std::invalid_argument(std::string(flag) + " " + value +
                                    " chooses how the cuda backend computes; this run's device is " + device +
                                    ", where it would change nothing (leave it out, or run with --device cuda)");
  }
  // Set before the backend exists: oneDNN and the backends' own loops size their thread teams
  // from it at each parallel region, on this (the calling) thread.
  if (options.threads > 0) omp_set_num_threads(options.threads);
  std::unique_ptr<Backend> backend;
  if (device == "reference") backend = std::make_unique<ReferenceBackend>();
  if (device == "cpu") backend = std::make_unique<CpuBackend>(*fusion);
#if CONVBENCH_WITH_CUDA
  if (device == "cuda") {
    cuda::CudaBackendOptions cuda_options;
    cuda_options.cudnn_algo = *cuda::parse_cudnn_algo_mode(options.cudnn_algo);
    cuda_options.depthwise_conv = *cuda::parse_depthwise_conv_path(options.depthwise_conv);
    cuda_options.cudnn_api = *cuda::parse_cudnn_api(options.cudnn_api);
    cuda_options.conv_fusion = *fusion;
    cuda_options.linear = *cuda::parse_linear_path(options.linear);
    backend = std::make_unique<cuda::CudaBackend>(cuda_options);
  }
#endif
  if (!backend) throw std::invalid_argument("no backend named \"" + device + "\" in this build");
  backend->allocator().set_limit(options.memory_limit_bytes);
  return backend;
}

}  // namespace convbench

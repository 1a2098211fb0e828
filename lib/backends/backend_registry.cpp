#include "backends/backend_registry.hpp"

#include <stdexcept>

#include "backends/reference/reference_backend.hpp"
#include "build_info.hpp"
#if CONVBENCH_WITH_CUDA
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_device.hpp"
#endif

namespace convbench {

DeviceChoice choose_device(const std::string& requested) {
  if (requested == "cpu" || requested == "reference") return {requested, ""};
  if (requested == "cuda") {
    if (!build_info::with_cuda)
      throw std::invalid_argument("cuda: this convbench was built without the CUDA backend "
                                  "(configure with CUDA and cuDNN present, see README)");
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
  throw std::invalid_argument("must be auto, cpu, reference or cuda, got \"" + requested + "\"");
}

std::unique_ptr<Backend> make_backend(const std::string& device) {
  if (device == "reference") return std::make_unique<ReferenceBackend>();
#if CONVBENCH_WITH_CUDA
  if (device == "cuda") return std::make_unique<cuda::CudaBackend>();
#endif
  // cpu (oneDNN) is registered once its backend lands
  throw std::invalid_argument("no backend named \"" + device + "\" in this build");
}

}  // namespace convbench

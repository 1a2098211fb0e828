#include "backends/backend_registry.hpp"

#include <stdexcept>

#include "backends/reference/reference_backend.hpp"
#include "build_info.hpp"

namespace convbench {

DeviceChoice choose_device(const std::string& requested) {
  if (requested == "cpu" || requested == "reference") return {requested, ""};
  if (requested == "cuda") {
    if (!build_info::with_cuda)
      throw std::invalid_argument("cuda: this convbench was built without the CUDA backend "
                                  "(configure with CUDA and cuDNN present, see README)");
    return {"cuda", ""};
  }
  if (requested == "auto") {
    if (!build_info::with_cuda) return {"cpu", "auto: the CUDA backend is not built, using cpu (oneDNN)"};
    return {"cpu", "auto: no usable GPU, using cpu (oneDNN)"};
  }
  throw std::invalid_argument("must be auto, cpu, reference or cuda, got \"" + requested + "\"");
}

std::unique_ptr<Backend> make_backend(const std::string& device) {
  if (device == "reference") return std::make_unique<ReferenceBackend>();
  // cpu (oneDNN) is registered once its backend lands
  throw std::invalid_argument("no backend named \"" + device + "\" in this build");
}

}  // namespace convbench

#include <oneapi/dnnl/dnnl.hpp>

#include "build_commit.hpp"
#include "build_info.hpp"
#include "commands.hpp"

namespace convbench::cli {

std::string version_text() {
  const dnnl_version_t* dnnl = dnnl_version();
  std::string text = std::string("convbench ") + build_info::version + " (commit " + build_info::git_commit + ", " +
                     build_info::compiler + ")\nbackends: reference, cpu (oneDNN " + std::to_string(dnnl->major) + "." +
                     std::to_string(dnnl->minor) + "." + std::to_string(dnnl->patch) + ")";
  if (build_info::with_cuda)
    text += ", cuda (CUDA " + std::string(build_info::cuda_version) + ", cuDNN " + build_info::cudnn_version + ")";
  else
    text += "\ncuda: not built";
  return text;
}

}  // namespace convbench::cli

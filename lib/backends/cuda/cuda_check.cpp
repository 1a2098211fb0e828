#include "backends/cuda/cuda_check.hpp"

#include <stdexcept>

namespace convbench::cuda {

std::string format_call_error(const char* file, int line, const char* expr, const std::string& status_name,
                              const std::string& description) {
  std::string out = std::string(file) + ":" + std::to_string(line) + ": `" + expr + "` failed: " + status_name;
  if (!description.empty() && description != status_name) out += " (" + description + ")";
  return out;
}

bool is_out_of_memory(cudaError_t status) { return status == cudaErrorMemoryAllocation; }

bool is_out_of_memory(cudnnStatus_t status) {
  return status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
         status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
}

void throw_cuda_error(cudaError_t status, const char* expr, const char* file, int line) {
  const std::string message = format_call_error(file, line, expr, cudaGetErrorName(status), cudaGetErrorString(status));
  if (is_out_of_memory(status)) {
    // An allocation failure is not sticky: clear it so that the next call does not report it.
    (void)cudaGetLastError();
    throw CudaOutOfMemory(message);
  }
  throw std::runtime_error(message);
}

std::string cudnn_status_text(cudnnStatus_t status) {
  // cuDNN 9 keeps a longer explanation of the last failure; it is empty when there is none.
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof detail);
  std::string description = cudnnGetErrorString(status);
  if (detail[0] != '\0') description += ": " + std::string(detail);
  return description;
}

void throw_cudnn_error(cudnnStatus_t status, const char* expr, const char* file, int line) {
  const std::string description = cudnn_status_text(status);
  const std::string message =
      format_call_error(file, line, expr, "cudnnStatus_t " + std::to_string(static_cast<int>(status)), description);
  if (is_out_of_memory(status)) throw CudaOutOfMemory(message);
  throw std::runtime_error(message);
}

}  // namespace convbench::cuda

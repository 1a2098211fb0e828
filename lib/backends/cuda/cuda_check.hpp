// Checking every CUDA runtime and cuDNN call. A failed call throws std::runtime_error naming
// file:line, the expression and the library's own error text; an allocation failure throws
// CudaOutOfMemory (an OutOfMemory), so that the variant's row gets status "oom" instead of "error".
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "runtime/allocator.hpp"

namespace convbench::cuda {

// An allocation inside a CUDA or cuDNN call failed. The requested size is not known there, so
// the message is the failed call itself rather than OutOfMemory's "N bytes requested".
class CudaOutOfMemory : public OutOfMemory {
 public:
  explicit CudaOutOfMemory(const std::string& message) : OutOfMemory(0, message), message_(message) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// "file:line: `expr` failed: status_name (description)"; both checks and their tests use it.
std::string format_call_error(const char* file, int line, const char* expr, const std::string& status_name,
                              const std::string& description);

// cuDNN's name for a failed status and, when cuDNN 9 kept one, its longer explanation of the
// last failure: "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT: ...".
std::string cudnn_status_text(cudnnStatus_t status);

// Whether a status means memory ran out (these become CudaOutOfMemory).
bool is_out_of_memory(cudaError_t status);
bool is_out_of_memory(cudnnStatus_t status);

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* expr, const char* file, int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* expr, const char* file, int line);

inline void check_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, expr, file, line);
}

inline void check_cudnn(cudnnStatus_t status, const char* expr, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) throw_cudnn_error(status, expr, file, line);
}

}  // namespace convbench::cuda

#define CONVBENCH_CUDA_CHECK(expr) ::convbench::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)
#define CONVBENCH_CUDNN_CHECK(expr) ::convbench::cuda::check_cudnn((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, execution errors at the next
// synchronising call.
#define CONVBENCH_CUDA_CHECK_LAUNCH() CONVBENCH_CUDA_CHECK(cudaGetLastError())

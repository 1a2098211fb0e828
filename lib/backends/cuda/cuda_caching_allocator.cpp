#include "backends/cuda/cuda_caching_allocator.hpp"

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_check.hpp"

namespace convbench::cuda {

CudaCachingAllocator::~CudaCachingAllocator() {
  try {
    release_cached();
  } catch (const std::exception&) {
    // A destructor must not throw; a dead context frees its memory anyway.
  }
}

void* CudaCachingAllocator::system_allocate(int64_t size) {
  void* p = nullptr;
  const cudaError_t status = calls_.malloc(&p, static_cast<size_t>(size));
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it
    return nullptr;
  }
  CONVBENCH_CUDA_CHECK(status);
  return p;
}

bool CudaCachingAllocator::system_free(void* block) {
  const cudaError_t status = calls_.free(block);
  if (status == cudaSuccess) return true;
  (void)cudaGetLastError();
  if (first_release_failure_ == cudaSuccess) first_release_failure_ = status;
  return false;
}

void CudaCachingAllocator::report_release_failures() {
  const cudaError_t failure = first_release_failure_;
  first_release_failure_ = cudaSuccess;
  if (failure != cudaSuccess) throw_cuda_error(failure, "cudaFree(cached block)", __FILE__, __LINE__);
}

std::string CudaCachingAllocator::out_of_memory_detail(int64_t size) const {
  size_t free_bytes = 0, total_bytes = 0;
  const bool known = calls_.mem_get_info(&free_bytes, &total_bytes) == cudaSuccess;
  (void)cudaGetLastError();
  std::string detail = over_reserve_limit(size)
                           ? "CUDA allocator limit " + std::to_string(reserve_limit()) + " bytes, " +
                                 std::to_string(stats().reserved) + " reserved"
                           : std::string("cudaMalloc: ") + cudaGetErrorString(cudaErrorMemoryAllocation);
  if (known)
    detail += "; device has " + std::to_string(free_bytes) + " of " + std::to_string(total_bytes) + " bytes free";
  return detail;
}

}  // namespace convbench::cuda

#include "backends/cuda/cuda_caching_allocator.hpp"

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_check.hpp"

namespace convbench::cuda {

namespace {
constexpr int64_t kRound = 512;
}  // namespace

int64_t CudaCachingAllocator::rounded_size(int64_t bytes) { return (bytes + kRound - 1) / kRound * kRound; }

CudaCachingAllocator::~CudaCachingAllocator() {
  try {
    release_cached();
  } catch (const std::exception&) {
    // A destructor must not throw; a dead context frees its memory anyway.
  }
}

void* CudaCachingAllocator::system_allocate(int64_t size) {
  if (limit_ > 0 && stats().reserved + size > limit_) return nullptr;
  void* p = nullptr;
  const cudaError_t status = calls_.malloc(&p, static_cast<size_t>(size));
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it
    return nullptr;
  }
  CONVBENCH_CUDA_CHECK(status);
  return p;
}

void* CudaCachingAllocator::do_allocate(int64_t bytes) {
  const int64_t size = rounded_size(bytes);
  // Exact size class only: reusing a larger block would make `reserved` depend on history.
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end()) {
    void* p = it->second;
    free_blocks_.erase(it);
    return p;
  }
  void* p = system_allocate(size);
  if (p == nullptr) {
    // Cached blocks of other sizes may be what stands in the way: give them back and retry once.
    release_cached();
    p = system_allocate(size);
  }
  if (p == nullptr) {
    size_t free_bytes = 0, total_bytes = 0;
    const bool known = calls_.mem_get_info(&free_bytes, &total_bytes) == cudaSuccess;
    (void)cudaGetLastError();
    std::string detail = limit_ > 0 && stats().reserved + size > limit_
                             ? "CUDA allocator limit " + std::to_string(limit_) + " bytes, " +
                                   std::to_string(stats().reserved) + " reserved"
                             : std::string("cudaMalloc: ") + cudaGetErrorString(cudaErrorMemoryAllocation);
    if (known)
      detail += "; device has " + std::to_string(free_bytes) + " of " + std::to_string(total_bytes) + " bytes free";
    throw OutOfMemory(bytes, detail);
  }
  mutable_stats().on_reserve(size);
  return p;
}

void CudaCachingAllocator::do_deallocate(void* ptr, int64_t bytes) { free_blocks_.emplace(rounded_size(bytes), ptr); }

void CudaCachingAllocator::release_cached() {
  // cudaFree waits for the device, so no queued kernel still uses a block freed here. The
  // statistics drop only for blocks the device has really taken back.
  cudaError_t first_failure = cudaSuccess;
  for (auto it = free_blocks_.begin(); it != free_blocks_.end();) {
    const cudaError_t status = calls_.free(it->second);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      if (first_failure == cudaSuccess) first_failure = status;
      ++it;
      continue;
    }
    mutable_stats().on_reserve(-it->first);
    it = free_blocks_.erase(it);
  }
  if (first_failure != cudaSuccess) throw_cuda_error(first_failure, "cudaFree(cached block)", __FILE__, __LINE__);
}

}  // namespace convbench::cuda

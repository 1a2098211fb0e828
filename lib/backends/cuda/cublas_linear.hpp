// cuBLAS for the linear op (linear_cuda.cpp): one handle on the backend's stream, with no
// workspace of its own, so that the caching allocator still holds every byte the memory model
// predicts and a step can be captured as a CUDA graph. The build links cuBLAS when CMake finds
// it beside the CUDA toolkit (CONVBENCH_WITH_CUBLAS); otherwise the linear op runs convbench's
// own kernels and `--linear cublas` says why it cannot.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "backends/cuda/linear_gemm.hpp"
#include "graph/dtype.hpp"

namespace convbench::cuda {

// Whether this build links cuBLAS.
bool cublas_available();
// Whether `path` runs the linear op in cuBLAS in this build (auto: when it is built).
bool uses_cublas(LinearPath path);

class CublasLinear {
 public:
  // Throws std::invalid_argument, saying why, when the build has no cuBLAS.
  explicit CublasLinear(cudaStream_t stream);
  ~CublasLinear();
  CublasLinear(const CublasLinear&) = delete;
  CublasLinear& operator=(const CublasLinear&) = delete;

  // C = op(A) op(B) (GemmArgs) in `dtype`'s storage, accumulated in float: float32 without TF32
  // (cuBLAS's pedantic float compute), tf32 with TF32 tensor cores, float16 and bfloat16 with a
  // float accumulator, as the convolutions are.
  void gemm(DType dtype, const GemmArgs& args, const void* a, const void* b, void* c);

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace convbench::cuda

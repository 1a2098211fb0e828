#include "backends/cuda/cublas_linear.hpp"

#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_check.hpp"

#if CONVBENCH_WITH_CUBLAS
#include <cublas_v2.h>
#endif

namespace convbench::cuda {

#if CONVBENCH_WITH_CUBLAS

namespace {

void check_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const std::string message =
      format_call_error(file, line, expr, cublasGetStatusName(status), cublasGetStatusString(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw CudaOutOfMemory(message);
  throw std::runtime_error(message);
}

#define CONVBENCH_CUBLAS_CHECK(expr) check_cublas((expr), #expr, __FILE__, __LINE__)

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes gemm_types(DType dtype) {
  switch (dtype) {
    case DType::float32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
    case DType::tf32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case DType::float16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::bfloat16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    default: break;
  }
  throw std::invalid_argument("cuda backend: linear: no cuBLAS GEMM for dtype " + std::string(to_string(dtype)));
}

}  // namespace

struct CublasLinear::Handle {
  cublasHandle_t handle = nullptr;
};

bool cublas_available() { return true; }

CublasLinear::CublasLinear(cudaStream_t stream) : handle_(std::make_unique<Handle>()) {
  CONVBENCH_CUBLAS_CHECK(cublasCreate(&handle_->handle));
  try {
    CONVBENCH_CUBLAS_CHECK(cublasSetStream(handle_->handle, stream));
    // No workspace: cuBLAS would otherwise allocate its own, outside the caching allocator (the
    // memory model's byte-for-byte prediction) and, under stream capture, inside the graph.
    CONVBENCH_CUBLAS_CHECK(cublasSetWorkspace(handle_->handle, nullptr, 0));
  } catch (...) {
    cublasDestroy(handle_->handle);
    throw;
  }
}

CublasLinear::~CublasLinear() {
  if (handle_ && handle_->handle) cublasDestroy(handle_->handle);
}

void CublasLinear::gemm(DType dtype, const GemmArgs& g, const void* a, const void* b, void* c) {
  const GemmTypes t = gemm_types(dtype);
  const float alpha = 1.0f, beta = 0.0f;  // the scale type of a float compute type
  CONVBENCH_CUBLAS_CHECK(cublasGemmEx(
      handle_->handle, g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n,
      g.k, &alpha, a, t.data, g.lda, b, t.data, g.ldb, &beta, c, t.data, g.ldc, t.compute, CUBLAS_GEMM_DEFAULT));
}

#else

struct CublasLinear::Handle {};

bool cublas_available() { return false; }

CublasLinear::CublasLinear(cudaStream_t) {
  throw std::invalid_argument(
      "cuda backend: this convbench was built without cuBLAS (CMake found no CUDA::cublas beside the CUDA "
      "toolkit): use --linear own");
}

CublasLinear::~CublasLinear() = default;

void CublasLinear::gemm(DType, const GemmArgs&, const void*, const void*, void*) {
  throw std::logic_error("cuda backend: cuBLAS is not built");
}

#endif

bool uses_cublas(LinearPath path) {
  return path == LinearPath::cublas || (path == LinearPath::automatic && cublas_available());
}

}  // namespace convbench::cuda

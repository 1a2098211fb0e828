// The linear op as cuBLAS GEMMs: which matrices, transposes, sizes and leading dimensions each
// of its three products takes. Kept free of cuBLAS calls, so that the mapping is checked on every
// machine (tests/cuda_host_test.cpp runs these arguments through a plain column-major GEMM
// against the reference backend); cublas_linear.cpp makes the calls.
//
// The linear op's activations have spatial size 1, so in either layout x is the row-major
// (N, in) matrix, y is (N, out) and the weight is (out, in). cuBLAS is column-major: a row-major
// (R, C) matrix is its column-major (C x R) matrix with leading dimension C. So, column-major:
//   forward      y  (out x N) = w^T (w is in x out) * x  (in x N)    A = w, B = x
//   grad input   dx (in x N)  = w   (in x out)      * dy (out x N)   A = w, B = dy
//   grad weight  dw (in x out) = x  (in x N)        * dy^T (N x out) A = x, B = dy
#pragma once

#include <optional>
#include <string_view>

namespace convbench::cuda {

enum class LinearProduct { forward, grad_input, grad_weight };

// C (m x n, leading dimension ldc) = op(A) (m x k) * op(B) (k x n), column-major, where op
// transposes when the flag says so; A and B are the operands named above.
struct GemmArgs {
  bool transpose_a = false, transpose_b = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
};

GemmArgs linear_gemm_args(int batch, int in_features, int out_features, LinearProduct product);

// `--linear auto|own|cublas` (cuda): cuBLAS's GEMMs or convbench's kernels (kernels/linear.cu, one
// thread per result element); auto is cuBLAS where the build has it.
enum class LinearPath { automatic, own, cublas };
std::string_view to_string(LinearPath path);
std::optional<LinearPath> parse_linear_path(std::string_view name);

}  // namespace convbench::cuda

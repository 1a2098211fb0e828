#include "backends/cuda/linear_gemm.hpp"

namespace convbench::cuda {

GemmArgs linear_gemm_args(int batch, int in_features, int out_features, LinearProduct product) {
  GemmArgs g;
  switch (product) {
    case LinearProduct::forward:
      // The row-major (out, in) weight is column-major (in x out): transposed, out x in.
      g.transpose_a = true;
      g.m = out_features, g.n = batch, g.k = in_features;
      g.lda = in_features, g.ldb = in_features, g.ldc = out_features;
      break;
    case LinearProduct::grad_input:
      g.m = in_features, g.n = batch, g.k = out_features;
      g.lda = in_features, g.ldb = out_features, g.ldc = in_features;
      break;
    case LinearProduct::grad_weight:
      // dy is column-major (out x N): transposed, N x out.
      g.transpose_b = true;
      g.m = in_features, g.n = out_features, g.k = batch;
      g.lda = in_features, g.ldb = out_features, g.ldc = in_features;
      break;
  }
  return g;
}

std::string_view to_string(LinearPath path) {
  switch (path) {
    case LinearPath::automatic: return "auto";
    case LinearPath::own: return "own";
    case LinearPath::cublas: return "cublas";
  }
  return "?";
}

std::optional<LinearPath> parse_linear_path(std::string_view name) {
  for (LinearPath p : {LinearPath::automatic, LinearPath::own, LinearPath::cublas})
    if (to_string(p) == name) return p;
  return std::nullopt;
}

}  // namespace convbench::cuda

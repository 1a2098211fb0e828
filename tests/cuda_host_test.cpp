// The CUDA backend's host-side logic, which needs no GPU: how tensors and filters are described
// to cuDNN (dims and strides for both layouts, 2-D and 3-D), how conv and conv_transpose map onto
// cuDNN's directions, how a conv's workspace is laid out, the kernels' workspace sizes, which ops
// the backend refuses, error messages of the CUDA and cuDNN checks, and allocator rounding.
// Runs on every machine where the CUDA backend is built; GPU behaviour is in cuda_backend_test.cpp.
#include <gtest/gtest.h>

#if CONVBENCH_WITH_CUDA

#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../kernels/kernels.hpp"  // the kernels' host API (the repo root is not on the tests' include path)
#include "backends/cuda/conv_algo_fallback.hpp"
#include "backends/cuda/conv_problem.hpp"
#include "backends/cuda/cublas_linear.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_caching_allocator.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cudnn_conv.hpp"
#include "backends/cuda/first_launch_start.hpp"
#include "backends/cuda/nvml_clock.hpp"
#include "backends/cuda/nvtx_range.hpp"
#include "backends/reference/reference_backend.hpp"
#include "ops/graph_builder.hpp"
#include "reference_op_harness.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench::cuda {
namespace {

using reftest::conv_attrs;

TensorDesc desc(std::vector<int64_t> shape, Layout layout, DType dtype = DType::float32) {
  return TensorDesc{std::move(shape), dtype, layout};
}

// ---- tensors and filters as cuDNN sees them ---------------------------------------------------

TEST(CudaConvProblem, CudnnDimsAreLogicalWithLayoutStrides) {
  const CudnnDims nchw = cudnn_dims(desc({2, 3, 4, 5}, Layout::channels_first));
  EXPECT_EQ(nchw.dims, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(nchw.strides, (std::vector<int>{60, 20, 5, 1}));
  const CudnnDims nhwc = cudnn_dims(desc({2, 3, 4, 5}, Layout::channels_last));
  EXPECT_EQ(nhwc.dims, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(nhwc.strides, (std::vector<int>{60, 1, 15, 3}));
  const CudnnDims ncdhw = cudnn_dims(desc({2, 3, 4, 5, 6}, Layout::channels_first));
  EXPECT_EQ(ncdhw.strides, (std::vector<int>{360, 120, 30, 6, 1}));
  const CudnnDims ndhwc = cudnn_dims(desc({2, 3, 4, 5, 6}, Layout::channels_last));
  EXPECT_EQ(ndhwc.dims, (std::vector<int>{2, 3, 4, 5, 6}));
  EXPECT_EQ(ndhwc.strides, (std::vector<int>{360, 1, 90, 18, 3}));
}

TEST(CudaConvProblem, DimsAndStridesBeyondIntAreRefused) {
  EXPECT_THROW(cudnn_dims(desc({1, 1, int64_t{1} << 31, 1}, Layout::channels_first)), std::invalid_argument);
  // Each dim fits, but N's stride does not.
  EXPECT_THROW(cudnn_dims(desc({2, 1, 65536, 32768}, Layout::channels_first)), std::invalid_argument);
  EXPECT_THROW(to_int_vector({1, int64_t{1} << 40}, "padding"), std::invalid_argument);
  EXPECT_EQ(to_int_vector({1, 2, 3}, "padding"), (std::vector<int>{1, 2, 3}));
}

TEST(CudaConvProblem, WeightOrderMattersOnlyWithSeveralTapsAndChannels) {
  EXPECT_TRUE(weight_in_layout_order(desc({8, 4, 3, 3}, Layout::channels_first), Layout::channels_first));
  EXPECT_FALSE(weight_in_layout_order(desc({8, 4, 3, 3}, Layout::channels_first), Layout::channels_last));
  EXPECT_FALSE(weight_in_layout_order(desc({8, 4, 3, 3, 3}, Layout::channels_last), Layout::channels_first));
  // KCRS and KRSC coincide for depthwise filters (C/groups = 1) and pointwise ones (one tap).
  EXPECT_TRUE(weight_in_layout_order(desc({8, 1, 3, 3}, Layout::channels_first), Layout::channels_last));
  EXPECT_TRUE(weight_in_layout_order(desc({8, 4, 1, 1, 1}, Layout::channels_first), Layout::channels_last));
}

Graph conv_graph(const TensorDesc& in, const ConvAttrs& a, bool transposed) {
  GraphBuilder b("g", in);
  const int y = transposed ? b.conv_transpose("c", b.input(), a) : b.conv("c", b.input(), a);
  return b.finish(y);
}

TEST(CudaConvProblem, ConvTransposeSwapsXAndY) {
  const TensorDesc in = desc({2, 4, 5, 6}, Layout::channels_last, DType::float16);
  const Graph conv = conv_graph(in, conv_attrs(6, {3, 2}, {2, 1}, {1, 0}, {2, 1}, 2, true), false);
  const ConvProblem p = conv_problem(conv, conv.ops[0]);
  EXPECT_FALSE(p.transposed);
  EXPECT_EQ(p.x, in);
  EXPECT_EQ(p.y, conv.desc(conv.ops[0].output));
  EXPECT_EQ(p.w.shape, (std::vector<int64_t>{6, 2, 3, 2}));
  EXPECT_EQ(p.padding, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(p.stride, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(p.dilation, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(p.groups, 2);

  EXPECT_FALSE(p.padded());

  const Graph up = conv_graph(in, conv_attrs(6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 2, true, {1, 1}), true);
  const ConvProblem t = conv_problem(up, up.ops[0]);
  EXPECT_TRUE(t.transposed);
  EXPECT_EQ(t.x, up.desc(up.ops[0].output));  // cuDNN's x: the transposed conv's (larger) output
  EXPECT_EQ(t.y, in);
  EXPECT_FALSE(t.padded());                                  // output_padding 1 < stride 2
  EXPECT_EQ(t.w.shape, (std::vector<int64_t>{4, 3, 3, 3}));  // (C_in, C_out / groups, k): K = C_in
  EXPECT_EQ(t.x.shape, (std::vector<int64_t>{2, 6, 10, 12}));
}

// The plan cache's key: problems that give cuDNN the same descriptors share a plan (and a hash);
// any field cuDNN sees tells two apart, whatever the op's own view of y.
TEST(CudaConvProblem, ThePlanKeyComparesWhatCudnnSees) {
  const TensorDesc in = desc({2, 4, 9, 8}, Layout::channels_last);
  const ConvAttrs a = conv_attrs(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true);
  const Graph g = conv_graph(in, a, false);
  const ConvProblem p = conv_problem(g, g.ops[0]);
  const SameCudnnProblem same;
  const CudnnProblemHash hash;
  ConvProblem q = p;
  q.y_op.shape[2] += 1;  // the op's view, not cuDNN's
  q.transposed = true;
  EXPECT_TRUE(same(p, q));
  EXPECT_EQ(hash(p), hash(q));
  std::vector<ConvProblem> others;
  for (int change = 0; change < 8; ++change) {
    ConvProblem o = p;
    switch (change) {
      case 0: o.x.layout = Layout::channels_first; break;
      case 1: o.x.dtype = DType::float16; break;
      case 2: o.w.shape[1] = 4; break;
      case 3: o.y.shape[3] -= 1; break;
      case 4: o.padding = {1, 0}; break;
      case 5: o.stride = {2, 1}; break;
      case 6: o.dilation = {1, 2}; break;
      default: o.groups = 4; break;
    }
    EXPECT_FALSE(same(p, o)) << "change " << change;
    others.push_back(o);
  }
  // The hash mixes every compared field (no two of these collide in practice).
  for (const ConvProblem& o : others) EXPECT_NE(hash(p), hash(o));
  // Padding (1, 2) with stride (3, 4) and padding (1) with stride (2, 3, 4) hash apart.
  ConvProblem split_a = p, split_b = p;
  split_a.padding = {1, 2};
  split_a.stride = {3, 4};
  split_b.padding = {1};
  split_b.stride = {2, 3, 4};
  EXPECT_NE(hash(split_a), hash(split_b));
}

TEST(CudaNvtx, PerOpRangesAreNamedOnlyWhenAToolIsAttached) {
  EXPECT_FALSE(nvtx_tool_attached(nullptr));
  EXPECT_FALSE(nvtx_tool_attached(""));
  EXPECT_TRUE(nvtx_tool_attached("/opt/nvidia/nsight-systems/target-linux-x64/libToolsInjection64.so"));
}

// cuDNN's forward output size of x with symmetric padding, per dim.
int64_t conv_output(int64_t x, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (x + 2 * p - d * (k - 1) - 1) / s + 1;
}

TEST(CudaConvProblem, OutputPaddingAtTheStridePadsCudnnsY) {
  // Valid in the IR below the dilation: the conv this is the gradient of would pad asymmetrically,
  // so cuDNN's y is the input with output_padding / stride more positions at the end.
  const TensorDesc in = desc({1, 4, 5, 5, 3}, Layout::channels_last);
  const Graph g = conv_graph(in, conv_attrs(6, {3, 3, 2}, {1, 2, 1}, {1, 1, 0}, {2, 1, 1}, 1, true, {1, 1, 0}), true);
  const ConvProblem p = conv_problem(g, g.ops[0]);
  EXPECT_TRUE(p.padded());
  EXPECT_EQ(p.y_op, in);
  EXPECT_EQ(p.y_extra, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(p.y.shape, (std::vector<int64_t>{1, 4, 6, 5, 3}));
  EXPECT_EQ(p.y.layout, Layout::channels_last);
  // cuDNN's symmetric conv of x yields exactly the padded y in every dim.
  for (size_t d = 0; d < 3; ++d)
    EXPECT_EQ(conv_output(p.x.shape[2 + d], p.w.shape[2 + d], p.stride[d], p.padding[d], p.dilation[d]),
              p.y.shape[2 + d])
        << "dim " << d;
}

TEST(CudaConvProblem, DirectionsPerPhase) {
  using D = ConvDirection;
  EXPECT_EQ(conv_directions(OpKind::conv, Phase::forward, true), (std::vector<D>{D::forward}));
  EXPECT_EQ(conv_directions(OpKind::conv, Phase::backward, true),
            (std::vector<D>{D::backward_data, D::backward_filter}));
  EXPECT_EQ(conv_directions(OpKind::conv, Phase::backward, false), (std::vector<D>{D::backward_filter}));
  EXPECT_EQ(conv_directions(OpKind::conv_transpose, Phase::forward, false), (std::vector<D>{D::backward_data}));
  EXPECT_EQ(conv_directions(OpKind::conv_transpose, Phase::backward, true),
            (std::vector<D>{D::forward, D::backward_filter}));
  EXPECT_EQ(conv_directions(OpKind::conv_transpose, Phase::backward, false), (std::vector<D>{D::backward_filter}));
  EXPECT_EQ(to_string(D::backward_filter), "backward_filter");
}

TEST(CudaConvProblem, WorkspaceIsTheLargestDirectionAfterTheAlignedWeightAndPaddedY) {
  const ConvWorkspaceLayout none = conv_workspace_layout(0, 0, {});
  EXPECT_EQ(none.total, 0);
  const ConvWorkspaceLayout two = conv_workspace_layout(0, 0, {100, 300});
  EXPECT_EQ(two.cudnn_offset, 0);
  EXPECT_EQ(two.cudnn_bytes, 300);
  EXPECT_EQ(two.total, 300);
  const ConvWorkspaceLayout weight_only = conv_workspace_layout(1000, 0, {0, 0});
  EXPECT_EQ(weight_only.weight_offset, 0);
  EXPECT_EQ(weight_only.weight_bytes, 1000);
  EXPECT_EQ(weight_only.cudnn_bytes, 0);
  EXPECT_EQ(weight_only.total, 1000);
  const ConvWorkspaceLayout both = conv_workspace_layout(1000, 0, {20, 10});
  EXPECT_EQ(both.cudnn_offset, 1024);
  EXPECT_EQ(both.total, 1044);
  const ConvWorkspaceLayout padded = conv_workspace_layout(1000, 600, {20});
  EXPECT_EQ(padded.padded_offset, 1024);
  EXPECT_EQ(padded.cudnn_offset, 1024 + 768);
  EXPECT_EQ(padded.total, 1024 + 768 + 20);
  EXPECT_EQ(conv_workspace_layout(0, 600, {0}).total, 600);
  EXPECT_EQ(align_up(0), 0);
  EXPECT_EQ(align_up(1), 256);
  EXPECT_EQ(align_up(256), 256);
  EXPECT_EQ(align_up(257, 512), 512);
}

// ---- cuDNN names and math --------------------------------------------------------------------

TEST(CudnnConvNames, AlgorithmsMathTypesAndModes) {
  EXPECT_EQ(algo_name(ConvDirection::forward, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM),
            "IMPLICIT_PRECOMP_GEMM");
  EXPECT_EQ(algo_name(ConvDirection::forward, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED), "WINOGRAD_NONFUSED");
  EXPECT_EQ(algo_name(ConvDirection::backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING), "FFT_TILING");
  EXPECT_EQ(algo_name(ConvDirection::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3), "ALGO_3");
  EXPECT_EQ(algo_name(ConvDirection::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING), "FFT_TILING");
  EXPECT_EQ(algo_name(ConvDirection::forward, 42), "ALGO_42");
  EXPECT_EQ(math_name(CUDNN_FMA_MATH), "FMA_MATH");
  EXPECT_EQ(math_name(CUDNN_TENSOR_OP_MATH), "TENSOR_OP_MATH");
  EXPECT_EQ(parse_cudnn_algo_mode("find"), CudnnAlgoMode::find);
  EXPECT_EQ(parse_cudnn_algo_mode("heuristic"), CudnnAlgoMode::heuristic);
  EXPECT_FALSE(parse_cudnn_algo_mode("fastest").has_value());
  EXPECT_EQ(to_string(CudnnAlgoMode::find), "find");
}

TEST(CudnnConvNames, Float32ExcludesTf32AndHalfTypesAccumulateInFloat) {
  EXPECT_EQ(requested_math(DType::float32), CUDNN_FMA_MATH);
  EXPECT_EQ(requested_math(DType::tf32), CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(requested_math(DType::float16), CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(requested_math(DType::bfloat16), CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(cudnn_data_type(DType::tf32), CUDNN_DATA_FLOAT);
  EXPECT_EQ(cudnn_data_type(DType::float16), CUDNN_DATA_HALF);
  EXPECT_EQ(cudnn_data_type(DType::bfloat16), CUDNN_DATA_BFLOAT16);
  EXPECT_THROW(cudnn_data_type(DType::float64), std::invalid_argument);
  ConvAlgoChoice c{ConvDirection::backward_data,
                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                   CUDNN_FMA_MATH,
                   true,
                   4096,
                   -1.0f,
                   {},
                   {},
                   {},
                   {}};
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j.at("algo"), "ALGO_1");
  EXPECT_EQ(j.at("math"), "FMA_MATH");
  EXPECT_EQ(j.at("workspace_bytes"), 4096);
  EXPECT_FALSE(j.contains("find_ms"));
  EXPECT_FALSE(j.contains("find_found_none"));
  // Find mode that found nothing usable says so next to the heuristic's choice.
  c.find_found_none = "8 returned, none usable: IMPLICIT_GEMM (FMA_MATH): CUDNN_STATUS_NOT_SUPPORTED";
  EXPECT_EQ(to_json(c).at("find_found_none"), c.find_found_none);
  // What cuDNN returned and was not taken is listed, each with why.
  EXPECT_FALSE(to_json(c).contains("rejected"));
  c.rejected = {"FFT (FMA_MATH): CUDNN_STATUS_NOT_SUPPORTED", "ALGO_0 (FMA_MATH): nondeterministic"};
  EXPECT_EQ(to_json(c).at("rejected"), nlohmann::json(c.rejected));
}

// ---- deterministic mode -------------------------------------------------------------------------

TEST(CudnnDeterministic, OnlyDeterministicCandidatesStayWhereThereIsOne) {
  const std::vector<ConvAlgoCandidate> offered = {
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_FMA_MATH, false, 0, -1.0f, {}},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_FMA_MATH, true, 4096, -1.0f, {}},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, CUDNN_FMA_MATH, true, 1 << 20, -1.0f, {}}};
  std::vector<std::string> dropped;
  const std::vector<ConvAlgoCandidate> kept = prefer_deterministic(offered, ConvDirection::backward_data, dropped);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].algo, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);  // cuDNN's order kept
  EXPECT_EQ(kept[1].algo, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT);
  EXPECT_EQ(dropped, std::vector<std::string>{"ALGO_0 (FMA_MATH): nondeterministic"});
}

TEST(CudnnDeterministic, WithoutADeterministicAlgorithmEveryCandidateStays) {
  const std::vector<ConvAlgoCandidate> offered = {
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_TENSOR_OP_MATH, false, 0, -1.0f, {}},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, CUDNN_TENSOR_OP_MATH, false, 64, -1.0f, {}}};
  std::vector<std::string> dropped;
  const std::vector<ConvAlgoCandidate> kept = prefer_deterministic(offered, ConvDirection::backward_filter, dropped);
  ASSERT_EQ(kept.size(), 2u);  // runs, and the choice says deterministic: false
  EXPECT_FALSE(kept[0].deterministic);
  EXPECT_TRUE(dropped.empty());
}

TEST(CudnnDeterministic, OnlyTheLinearUpsamplesBackwardIsNamedNondeterministic) {
  GraphBuilder b("u", TensorDesc{{1, 4, 4, 4, 4}, DType::float32, Layout::channels_first});
  const int linear = b.upsample_linear("tri", b.input(), 2);
  const int nearest = b.upsample("near", linear, 2);
  const Graph g = b.finish(b.relu("r", nearest));
  const auto why = cuda_nondeterministic_reason(g, g.ops[0], true);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("atomics"), std::string::npos) << *why;
  EXPECT_FALSE(cuda_nondeterministic_reason(g, g.ops[0], false));  // inference: no backward
  EXPECT_FALSE(cuda_nondeterministic_reason(g, g.ops[1], true));
  EXPECT_FALSE(cuda_nondeterministic_reason(g, g.ops[2], true));
}

// --cudnn-api graph: which engines convbench runs, by their numerical notes (the rules of the
// legacy API's math types and of PyTorch's filter), and how op details name the engine.
TEST(CudnnGraphApi, EnginesAreFilteredByTheirNotes) {
  EXPECT_EQ(parse_cudnn_api("graph"), CudnnApi::graph);
  EXPECT_EQ(parse_cudnn_api(to_string(CudnnApi::legacy)), CudnnApi::legacy);
  EXPECT_FALSE(parse_cudnn_api("frontend"));
  EngineNotes tensor_core;
  tensor_core.tensor_core = true;
  EXPECT_TRUE(engine_rejection(tensor_core, DType::float32, false));  // TF32 where float32 forbids it
  EXPECT_FALSE(engine_rejection(tensor_core, DType::tf32, false));
  EXPECT_FALSE(engine_rejection(tensor_core, DType::bfloat16, false));
  EngineNotes down;
  down.down_convert_inputs = true;
  EngineNotes reduced;
  reduced.reduced_precision_reduction = true;
  for (DType d : {DType::float32, DType::tf32, DType::float16, DType::bfloat16}) {
    EXPECT_TRUE(engine_rejection(down, d, false)) << to_string(d);      // PyTorch drops these for every dtype
    EXPECT_FALSE(engine_rejection(reduced, d, false)) << to_string(d);  // and keeps these
  }
  EngineNotes nondeterministic;
  nondeterministic.nondeterministic = true;
  EXPECT_FALSE(engine_rejection(nondeterministic, DType::float32, false));
  EXPECT_EQ(engine_rejection(nondeterministic, DType::float32, true), "nondeterministic");
  EXPECT_FALSE(engine_rejection(EngineNotes{}, DType::float32, true));
}

TEST(CudnnConvNames, AFallbackIsRecordedInTheOpDetails) {
  ConvAlgoChoice c{ConvDirection::forward,
                   CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                   CUDNN_TENSOR_OP_MATH,
                   true,
                   0,
                   -1.0f,
                   {"IMPLICIT_GEMM (TENSOR_OP_MATH): CUDNN_STATUS_NOT_SUPPORTED_LAYOUT"},
                   {},
                   {},
                   {}};
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j.at("algo"), "GEMM");
  EXPECT_EQ(j.at("fallback_from"),
            nlohmann::json::array({"IMPLICIT_GEMM (TENSOR_OP_MATH): CUDNN_STATUS_NOT_SUPPORTED_LAYOUT"}));
  c.fallback_from.clear();
  EXPECT_FALSE(to_json(c).contains("fallback_from"));
}

// ---- falling back to the next cuDNN algorithm ---------------------------------------------------

// cuDNN's candidates as the heuristic might order them, with each one's workspace.
std::vector<ConvAlgoCandidate> forward_candidates() {
  return {{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_TENSOR_OP_MATH, true, 4096, -1.0f, {}},
          {CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_TENSOR_OP_MATH, true, 1 << 20, -1.0f, {}},
          {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_TENSOR_OP_MATH, true, 0, -1.0f, {}},
          {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_FMA_MATH, true, 2048, -1.0f, {}}};
}

// Calls whose attempt answers from a script: algorithm -> status (success when not listed).
struct ScriptedCalls {
  std::map<int, cudnnStatus_t> status;
  std::vector<int> tried;
  std::optional<std::string> broken;
  FallbackCalls calls() {
    FallbackCalls c;
    c.attempt = [this](const ConvAlgoCandidate& k) {
      tried.push_back(k.algo);
      auto it = status.find(k.algo);
      return it == status.end() ? CUDNN_STATUS_SUCCESS : it->second;
    };
    c.describe = [](cudnnStatus_t s) { return "status " + std::to_string(static_cast<int>(s)); };
    c.context_broken = [this] { return broken; };
    return c;
  }
};

// ---- the linear op as cuBLAS GEMMs ----------------------------------------------------------------

// cuBLAS's GEMM, column-major, as its documentation defines it: C = op(A) op(B).
std::vector<double> column_major_gemm(const GemmArgs& g, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> c(static_cast<size_t>(g.ldc) * g.n, 0.0);
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      double sum = 0.0;
      for (int p = 0; p < g.k; ++p) {
        const double av = g.transpose_a ? a[static_cast<size_t>(p + i * g.lda)] : a[static_cast<size_t>(i + p * g.lda)];
        const double bv = g.transpose_b ? b[static_cast<size_t>(j + p * g.ldb)] : b[static_cast<size_t>(p + j * g.ldb)];
        sum += av * bv;
      }
      c[static_cast<size_t>(i + j * g.ldc)] = sum;
    }
  return c;
}

// The three products' arguments (linear_gemm_args), run through that GEMM on the row-major
// buffers the backend hands cuBLAS, give the reference backend's output, input gradient and
// weight gradient, in both layouts (spatial size 1: the same memory).
TEST(CudaLinearGemm, TheArgumentsGiveTheReferencesProducts) {
  ReferenceBackend reference;
  for (const auto& [n, in, out] : {std::tuple{3, 5, 4}, std::tuple{1, 7, 2}, std::tuple{6, 1, 9}})
    for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
      SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(in) + "->" + std::to_string(out));
      GraphBuilder b("fc", desc({n, in, 1, 1}, layout));
      reftest::OpHarness h(reference, b.finish(b.linear("fc", b.input(), out, false)), 3);
      const std::vector<double> y = h.forward(true);
      const std::vector<double> dy = reftest::random_values(y.size(), 8);
      const reftest::OpGradients grads = h.backward(dy);
      const std::vector<double>& x = h.inputs[0];
      const std::vector<double>& w = h.params[0];
      auto close = [](const std::vector<double>& got, const std::vector<double>& want) {
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
      };
      close(column_major_gemm(linear_gemm_args(n, in, out, LinearProduct::forward), w, x), y);
      close(column_major_gemm(linear_gemm_args(n, in, out, LinearProduct::grad_input), w, dy), *grads.inputs.at(0));
      close(column_major_gemm(linear_gemm_args(n, in, out, LinearProduct::grad_weight), x, dy), grads.params.at(0));
    }
}

TEST(CudaLinearGemm, TheLinearPathAndItsNames) {
  for (LinearPath p : {LinearPath::automatic, LinearPath::own, LinearPath::cublas})
    EXPECT_EQ(parse_linear_path(to_string(p)), p);
  EXPECT_FALSE(parse_linear_path("blas"));
  EXPECT_FALSE(uses_cublas(LinearPath::own));
  EXPECT_EQ(uses_cublas(LinearPath::automatic), cublas_available());
  EXPECT_TRUE(uses_cublas(LinearPath::cublas));
}

// The name of the call in messages, built only when one is written.
std::string forward_call() { return "forward"; }

TEST(CudnnFallback, TheChosenAlgorithmRunsWhenItWorks) {
  ScriptedCalls script;
  int named = 0;  // the call's name is text for messages: a call that runs builds none
  const FallbackResult r = run_with_fallback(
      forward_candidates(), 0, 4096, ConvDirection::forward,
      [&named] {
        ++named;
        return std::string("forward");
      },
      script.calls());
  EXPECT_EQ(named, 0);
  EXPECT_EQ(r.ran, 0u);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(script.tried, std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM});
}

TEST(CudnnFallback, ARefusalMovesOnToTheNextCandidateThatFitsTheWorkspace) {
  ScriptedCalls script;
  script.status[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM] = CUDNN_STATUS_NOT_SUPPORTED_LAYOUT;
  const FallbackResult r =
      run_with_fallback(forward_candidates(), 0, 4096, ConvDirection::forward, forward_call, script.calls());
  // FFT needs 1 MiB of the 4 KiB allocated: skipped, and said so; IMPLICIT_GEMM runs.
  EXPECT_EQ(r.ran, 2u);
  EXPECT_EQ(script.tried, (std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM}));
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0], "IMPLICIT_PRECOMP_GEMM (TENSOR_OP_MATH): status 3004");
  EXPECT_EQ(r.failures[1], "FFT (TENSOR_OP_MATH): not tried, needs 1048576 bytes of workspace, 4096 allocated");
}

TEST(CudnnFallback, ExecutionAndMemoryFailuresAndTooSmallAWorkspaceAlsoMoveOn) {
  for (cudnnStatus_t failure :
       {CUDNN_STATUS_EXECUTION_FAILED_CUBLAS, CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED,
        CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, CUDNN_STATUS_NOT_SUPPORTED_SHAPE}) {
    ScriptedCalls script;
    script.status[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM] = failure;
    const FallbackResult r =
        run_with_fallback(forward_candidates(), 0, 1 << 20, ConvDirection::forward, forward_call, script.calls());
    EXPECT_EQ(r.ran, 1u) << failure;
  }
  EXPECT_FALSE(another_algorithm_may_work(CUDNN_STATUS_BAD_PARAM));
  EXPECT_FALSE(another_algorithm_may_work(CUDNN_STATUS_NOT_INITIALIZED));
}

TEST(CudnnFallback, LaterCallsStartFromTheCandidateThatRan) {
  ScriptedCalls script;
  const FallbackResult r =
      run_with_fallback(forward_candidates(), 2, 4096, ConvDirection::forward, forward_call, script.calls());
  EXPECT_EQ(r.ran, 2u);
  EXPECT_EQ(script.tried, std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM});
}

TEST(CudnnFallback, WhenNoneRunsTheOpIsUnsupportedAndEveryFailureIsNamed) {
  ScriptedCalls script;
  for (const ConvAlgoCandidate& c : forward_candidates()) script.status[c.algo] = CUDNN_STATUS_NOT_SUPPORTED;
  try {
    run_with_fallback(
        forward_candidates(), 0, 1 << 20, ConvDirection::forward,
        [] { return std::string("forward bfloat16 channels_last convolution"); }, script.calls());
    FAIL() << "no candidate runs, yet nothing was thrown";
  } catch (const UnsupportedOp& e) {
    EXPECT_EQ(std::string(e.what()),
              "cuda backend: no cuDNN algorithm runs this forward bfloat16 channels_last convolution (4 tried): "
              "IMPLICIT_PRECOMP_GEMM (TENSOR_OP_MATH): status 3000; FFT (TENSOR_OP_MATH): status 3000; "
              "IMPLICIT_GEMM (TENSOR_OP_MATH): status 3000; GEMM (FMA_MATH): status 3000");
  }
}

TEST(CudnnFallback, WhenOnlyMemoryFailedItIsOutOfMemory) {
  ScriptedCalls script;
  for (const ConvAlgoCandidate& c : forward_candidates())
    script.status[c.algo] = CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
  EXPECT_THROW(
      run_with_fallback(forward_candidates(), 0, 1 << 20, ConvDirection::forward, forward_call, script.calls()),
      OutOfMemory);
}

TEST(CudnnFallback, ABugOrABrokenContextStopsAtOnce) {
  ScriptedCalls bug;
  bug.status[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM] = CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  try {
    run_with_fallback(forward_candidates(), 0, 1 << 20, ConvDirection::forward, forward_call, bug.calls());
    FAIL();
  } catch (const UnsupportedOp&) {
    FAIL() << "a bad parameter is convbench's bug, not an unsupported op";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("status 2002"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bug.tried.size(), 1u);

  ScriptedCalls broken;
  broken.status[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM] = CUDNN_STATUS_EXECUTION_FAILED_CUDART;
  broken.broken = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  try {
    run_with_fallback(forward_candidates(), 0, 1 << 20, ConvDirection::forward, forward_call, broken.calls());
    FAIL();
  } catch (const UnsupportedOp&) {
    FAIL() << "a broken context is an error, not an unsupported op";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the CUDA context is broken (cudaErrorIllegalAddress"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(broken.tried.size(), 1u);
}

// ---- checks and their messages ---------------------------------------------------------------

TEST(CudaCheck, CudaFailureNamesFileLineExpressionAndError) {
  const int line = __LINE__ + 2;
  try {
    CONVBENCH_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const OutOfMemory&) {
    FAIL() << "an invalid value is not out of memory";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cuda_host_test.cpp:" + std::to_string(line) + ":"), std::string::npos) << m;
    EXPECT_NE(m.find("`cudaErrorInvalidValue` failed"), std::string::npos) << m;
    EXPECT_NE(m.find(cudaGetErrorString(cudaErrorInvalidValue)), std::string::npos) << m;
  }
  EXPECT_NO_THROW(CONVBENCH_CUDA_CHECK(cudaSuccess));
}

TEST(CudaCheck, AllocationFailuresAreOutOfMemory) {
  try {
    CONVBENCH_CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL() << "no exception";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("cudaErrorMemoryAllocation"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CONVBENCH_CUDNN_CHECK(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED), OutOfMemory);
  EXPECT_TRUE(is_out_of_memory(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED));
  EXPECT_FALSE(is_out_of_memory(CUDNN_STATUS_BAD_PARAM));
  EXPECT_FALSE(is_out_of_memory(cudaErrorInvalidValue));
}

TEST(CudaCheck, CudnnFailureNamesTheStatus) {
  const int line = __LINE__ + 2;
  try {
    CONVBENCH_CUDNN_CHECK(CUDNN_STATUS_BAD_PARAM);
    FAIL() << "no exception";
  } catch (const OutOfMemory&) {
    FAIL() << "a bad parameter is not out of memory";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cuda_host_test.cpp:" + std::to_string(line) + ":"), std::string::npos) << m;
    EXPECT_NE(m.find("`CUDNN_STATUS_BAD_PARAM` failed: cudnnStatus_t 2000"), std::string::npos) << m;
    EXPECT_NE(m.find(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM)), std::string::npos) << m;
  }
  EXPECT_NO_THROW(CONVBENCH_CUDNN_CHECK(CUDNN_STATUS_SUCCESS));
}

TEST(CudaCheck, MessageFormat) {
  EXPECT_EQ(format_call_error("a.cpp", 7, "f(x)", "E_BAD", "it broke"), "a.cpp:7: `f(x)` failed: E_BAD (it broke)");
  EXPECT_EQ(format_call_error("a.cpp", 7, "f(x)", "E_BAD", "E_BAD"), "a.cpp:7: `f(x)` failed: E_BAD");
}

// ---- device, allocator, backend without a device -----------------------------------------------

TEST(CudaDevice, LowestCompiledArchitecture) {
  EXPECT_EQ(lowest_architecture("80;90"), 80);
  EXPECT_EQ(lowest_architecture("90,80"), 80);
  EXPECT_EQ(lowest_architecture("86-real;90-virtual"), 86);
  EXPECT_EQ(lowest_architecture("native"), 0);
  EXPECT_GT(lowest_architecture(compiled_architectures()), 0) << compiled_architectures();
}

TEST(CudaCachingAllocator, RoundsTo512AndStartsEmpty) {
  EXPECT_EQ(CudaCachingAllocator::rounded_size(1), 512);
  EXPECT_EQ(CudaCachingAllocator::rounded_size(512), 512);
  EXPECT_EQ(CudaCachingAllocator::rounded_size(513), 1024);
  EXPECT_EQ(CudaCachingAllocator::rounded_size(100000), 100352);
  CudaCachingAllocator a;  // touches no device until the first allocation
  EXPECT_TRUE(a.on_device());
  EXPECT_EQ(a.stats().reserved, 0);
  EXPECT_EQ(a.cached_blocks(), 0);
  EXPECT_THROW(a.allocate(0, MemoryCategory::temporaries), std::invalid_argument);
}

// Host memory stands in for the device: the cache's bookkeeping is the same.
struct FakeDeviceMemory {
  int frees = 0, failing_frees = 0;
  DeviceMemoryCalls calls() {
    DeviceMemoryCalls c;
    c.malloc = [](void** p, size_t bytes) {
      *p = std::malloc(bytes);
      return *p ? cudaSuccess : cudaErrorMemoryAllocation;
    };
    c.free = [this](void* p) {
      if (failing_frees > 0) {
        --failing_frees;
        return cudaErrorLaunchFailure;
      }
      ++frees;
      std::free(p);
      return cudaSuccess;
    };
    c.mem_get_info = [](size_t* f, size_t* t) {
      *f = 0;
      *t = 0;
      return cudaSuccess;
    };
    return c;
  }
};

TEST(CudaCachingAllocator, ReleaseLowersTheStatisticsOnlyForBlocksTheDeviceTookBack) {
  FakeDeviceMemory device;
  CudaCachingAllocator a(0, device.calls());
  void* p = a.allocate(1000, MemoryCategory::temporaries);
  void* q = a.allocate(3000, MemoryCategory::temporaries);
  a.deallocate(p, 1000, MemoryCategory::temporaries);
  a.deallocate(q, 3000, MemoryCategory::temporaries);
  EXPECT_EQ(a.stats().reserved, 1024 + 3072);
  device.failing_frees = 1;  // the first cudaFree fails (the 1024-byte block: the map is ordered)
  EXPECT_THROW(a.release_cached(), std::runtime_error);
  EXPECT_EQ(device.frees, 1);
  EXPECT_EQ(a.cached_blocks(), 1) << "the block the device did not take back stays cached";
  EXPECT_EQ(a.stats().reserved, 1024) << "and stays counted as reserved";
  void* again = a.allocate(1000, MemoryCategory::temporaries);  // and can be handed out again
  EXPECT_EQ(again, p);
  a.deallocate(again, 1000, MemoryCategory::temporaries);
  a.release_cached();  // now cudaFree succeeds
  EXPECT_EQ(device.frees, 2);
  EXPECT_EQ(a.stats().reserved, 0);
  EXPECT_EQ(a.cached_blocks(), 0);
}

// Runs on every machine, so that a GPU machine has nothing to skip here: without a device the
// backend refuses to start and names the reason; with one it starts and says nothing.
TEST(CudaBackendConstruction, NamesTheReasonWithoutADeviceAndStartsWithOne) {
  const std::optional<std::string> why = cuda_unavailable_reason();
  if (why) {
    // Plain words first; the CUDA runtime's own text, if any, only as the detail in brackets.
    EXPECT_FALSE(why->starts_with("CUDA driver version")) << *why;
    const size_t jargon = why->find("CUDA driver version is insufficient");
    if (jargon != std::string::npos) {
      EXPECT_GT(jargon, why->find("(CUDA runtime: ")) << *why;
    }
    try {
      CudaBackend backend;
      FAIL() << "constructed without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "cuda: " + *why);
    }
    CudaCachingAllocator a;
    EXPECT_THROW(a.allocate(1024, MemoryCategory::temporaries), std::runtime_error);
    EXPECT_EQ(a.stats().reserved, 0);
    EXPECT_EQ(a.stats().current, 0);
  } else {
    CudaBackend backend;
    EXPECT_EQ(backend.name(), "cuda");
    EXPECT_EQ(backend.allocator().stats().reserved, 0);
  }
}

TEST(CudaDevice, NoDriverIsSaidInPlainWordsWithTheRuntimesMessageAsDetail) {
  const std::string insufficient = "CUDA driver version is insufficient for CUDA runtime version";
  // No driver loaded (cudaDriverGetVersion reports 0): what a machine without a GPU has.
  EXPECT_EQ(describe_unavailable(cudaErrorInsufficientDriver, insufficient, 0, 13000),
            "no NVIDIA driver or GPU found (CUDA runtime: " + insufficient + ")");
  EXPECT_EQ(describe_unavailable(cudaErrorNoDevice, "no CUDA-capable device is detected", 13000, 13000),
            "no NVIDIA driver or GPU found (CUDA runtime: no CUDA-capable device is detected)");
  // A driver that is there but too old gets other advice.
  EXPECT_EQ(describe_unavailable(cudaErrorInsufficientDriver, insufficient, 12040, 13000),
            "the NVIDIA driver supports CUDA 12.4, older than the CUDA 13.0 runtime this convbench was built "
            "with: update the driver (CUDA runtime: " +
                insufficient + ")");
  EXPECT_EQ(describe_unavailable(cudaErrorUnknown, "unknown error", 13000, 13000),
            "the GPU is not usable (CUDA runtime: unknown error)");
}

// ---- capabilities and kernel workspaces ------------------------------------------------------

TEST(CudaCapabilities, EveryReferenceOpCaseIsSupportedInTheFourGpuDtypes) {
  for (const reftest::OpCase& c : reftest::op_cases())
    for (DType dtype : {DType::float32, DType::tf32, DType::float16, DType::bfloat16})
      for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
        const Graph g = reftest::build_case(c, dtype, layout);
        for (const Op& op : g.ops) {
          const auto why = cuda_unsupported_reason(g, op);
          EXPECT_FALSE(why.has_value()) << c.name << " " << to_string(dtype) << ": " << why.value_or("");
        }
      }
}

// Mixed precision as CUDA autocast runs it: casts between the float dtypes, convs and linears on
// their weights' cast copies, batch norm's float32 weights under half activations, group norm in
// float32. Under CPU autocast's rules group norm would follow its half input with float32
// weights, which the kernels do not read: that graph is refused, naming the parameter.
TEST(CudaCapabilities, AutocastGraphsUnderCudasRulesAreSupported) {
  for (Precision mode : {Precision::amp_float16, Precision::amp_bfloat16})
    for (NormKind norm : {NormKind::batch, NormKind::group})
      for (const char* kind : {"standard", "bottleneck", "separable"}) {
        BlockSpec block = testing::small_block(2, 4, 8, 6);
        block.norm = norm;
        block.norm_groups = 2;
        block.residual = true;
        block.precision.precision = mode;
        block.autocast_device = AutocastDevice::cuda;
        const Graph g = build_variant_graph(block, testing::variant(kind));
        int casts = 0;
        for (const Op& op : g.ops) {
          casts += op.kind == OpKind::cast;
          const auto why = cuda_unsupported_reason(g, op);
          EXPECT_FALSE(why.has_value()) << kind << " " << to_string(mode) << " " << op.name << ": " << why.value_or("");
        }
        EXPECT_GT(casts, 0) << kind;
      }
  BlockSpec cpu_rules = testing::small_block(2, 4, 8, 6);
  cpu_rules.norm = NormKind::group;
  cpu_rules.norm_groups = 2;
  cpu_rules.precision.precision = Precision::amp_bfloat16;
  const Graph g = build_variant_graph(cpu_rules, testing::variant("standard"));
  std::vector<std::string> refused;
  for (const Op& op : g.ops)
    if (const auto why = cuda_unsupported_reason(g, op)) refused.push_back(op.name + ": " + *why);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find("has another dtype"), std::string::npos) << refused[0];
}

TEST(CudaCapabilities, Float64AndHugeTensorsAreRefusedWithAReason) {
  const Graph f64 = reftest::build_case(reftest::op_cases()[0], DType::float64, Layout::channels_first);
  const auto why = cuda_unsupported_reason(f64, f64.ops[0]);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("float64"), std::string::npos) << *why;

  GraphBuilder b("huge", desc({1, 2, 32768, 32768}, Layout::channels_first));  // 2^31 elements
  const Graph huge = b.finish(b.relu("r", b.input()));
  const auto big = cuda_unsupported_reason(huge, huge.ops[0]);
  ASSERT_TRUE(big.has_value());
  EXPECT_NE(big->find("2^31"), std::string::npos) << *big;
}

TEST(CudaCapabilities, ACudnnTensorPastTheLimitIsRefusedThoughTheOpsOwnAreNot) {
  // A conv_transpose whose output padding pads cuDNN's y (stride 1 below dilation 2): its input
  // 46340 x 46341 and its output 46339 x 46339 are below 2^31 elements, cuDNN's y 46341 x 46341
  // (which kernels::pad_box writes with int indices) is not.
  const Graph g = conv_graph(desc({1, 1, 46340, 46341}, Layout::channels_first),
                             conv_attrs(1, {3, 3}, {1, 1}, {3, 3}, {2, 2}, 1, false, {1, 0}), true);
  EXPECT_EQ(g.desc(g.ops[0].output).shape, (std::vector<int64_t>{1, 1, 46339, 46339}));
  ASSERT_TRUE(conv_problem(g, g.ops[0]).padded());
  const auto why = cuda_unsupported_reason(g, g.ops[0]);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("cuDNN's y 1x1x46341x46341"), std::string::npos) << *why;
  EXPECT_NE(why->find("2^31-1"), std::string::npos) << *why;
}

// The elementwise kernels' channel walk (kernels::ActPosition): from any start, stepping with
// next() gives every following element's (n, c, spatial) as dividing its position does, across
// spatial, channel and batch boundaries; spatial or channel sizes of 1 wrap every step.
TEST(CudaKernelIndexing, SteppingThroughPositionsAgreesWithDividingEachOne) {
  for (bool cl : {false, true})
    for (kernels::ActShape s :
         {kernels::ActShape{2, 3, 5, cl}, kernels::ActShape{3, 1, 7, cl}, kernels::ActShape{2, 5, 1, cl},
          kernels::ActShape{1, 1, 1, cl}, kernels::ActShape{4, 6, 9, cl}}) {
      s.channels_last = cl;
      for (int start = 0; start < s.numel(); ++start) {
        kernels::ActPosition pos = kernels::ActPosition::at(start, s);
        for (int p = start; p < s.numel() && p < start + 8; ++p, pos.next(s)) {
          const int n = cl ? p / (s.c * s.s) : p / (s.c * s.s);
          const int c = cl ? p % s.c : (p / s.s) % s.c;
          const int sp = cl ? (p / s.c) % s.s : p % s.s;
          ASSERT_EQ(pos.n, n) << "position " << p << " from " << start << (cl ? " channels_last" : "");
          ASSERT_EQ(pos.c, c) << "position " << p << " from " << start << (cl ? " channels_last" : "");
          ASSERT_EQ(pos.sp, sp) << "position " << p << " from " << start << (cl ? " channels_last" : "");
        }
      }
    }
}

TEST(CudaKernelWorkspace, ChannelReductionsAreSplitIntoAtMost256Chunks) {
  for (bool cl : {false, true})
    for (kernels::ActShape s : {kernels::ActShape{2, 3, 25, cl}, kernels::ActShape{8, 64, 3136, cl},
                                kernels::ActShape{6, 16, 32768, cl}, kernels::ActShape{64, 8, 200000, cl}}) {
      s.channels_last = cl;
      const kernels::ChannelReducePlan p = kernels::channel_reduce_plan(s);
      EXPECT_EQ(p.rows, s.n * s.s);
      EXPECT_GE(int64_t{p.splits} * p.rows_per_split, p.rows);
      EXPECT_LT(int64_t{p.splits - 1} * p.rows_per_split, p.rows);
      EXPECT_LE(p.splits, kernels::kMaxChunks);
    }
  // The seed block's batch norms channels-last (6 x 16 x 32^3): 256 chunks of 768 rows, where
  // 768 chunks of 256 rows made the one-thread-per-channel merge the slow part.
  const kernels::ChannelReducePlan seed = kernels::channel_reduce_plan({6, 16, 32768, true});
  EXPECT_EQ(seed.splits, 256);
  EXPECT_EQ(seed.rows_per_split, 768);
}

TEST(CudaKernelWorkspace, OneChannelAtTheElementLimitDoesNotOverflowThePlan) {
  // C = 1 and N x spatial = 2^31 - 1 elements, the largest tensor the backend accepts: rows + 255
  // does not fit an int.
  for (bool cl : {false, true}) {
    const kernels::ActShape s{1, 1, std::numeric_limits<int>::max(), cl};
    const kernels::ChannelReducePlan p = kernels::channel_reduce_plan(s);
    EXPECT_EQ(p.rows, std::numeric_limits<int>::max());
    EXPECT_GT(p.rows_per_split, 0);
    EXPECT_GE(int64_t{p.splits} * p.rows_per_split, p.rows);
    EXPECT_LT(int64_t{p.splits - 1} * p.rows_per_split, p.rows);
    EXPECT_LE(p.splits, kernels::kMaxChunks);
    EXPECT_GT(kernels::channel_sum_workspace_bytes(s), 0);
  }
}

TEST(CudaKernelWorkspace, BatchNormBytesArePartialsAndPerChannelResults) {
  // Channels-last 8 x 64 x 56 x 56: 25088 rows in chunks of 256 -> 98 chunks; each chunk keeps a
  // Welford accumulator (count, mean, m2: 12 bytes) per channel, then 2 floats per channel.
  GraphBuilder b("bn", desc({8, 64, 56, 56}, Layout::channels_last));
  const Graph g = b.finish(b.batch_norm("bn", b.input()));
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[0], Phase::forward, true), 98 * 64 * 12 + 512);
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[0], Phase::forward, false), 0);                  // running stats only
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[0], Phase::backward, true), 98 * 64 * 8 + 512);  // two float sums

  // Channels-first 2 x 3 x 5 x 5: one chunk of 50 rows; every region rounds up to 256 bytes.
  GraphBuilder small("bn", desc({2, 3, 5, 5}, Layout::channels_first));
  const Graph s = small.finish(small.batch_norm("bn", small.input()));
  EXPECT_EQ(kernel_workspace_bytes(s, s.ops[0], Phase::forward, true), 256 + 256);
}

TEST(CudaKernelWorkspace, OnlyNormsAndConvBiasGradientsNeedKernelScratch) {
  GraphBuilder b("g", desc({2, 4, 6, 6}, Layout::channels_first));
  const int c = b.conv("c", b.input(), conv_attrs(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true));
  const int n = b.conv("n", c, conv_attrs(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false));
  const int gn = b.group_norm("gn", n, 2);
  const Graph g = b.finish(b.relu("r", gn));
  // Bias gradient: one chunk of 72 rows x 4 channels x 4 bytes, rounded to 256.
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[0], Phase::backward, true), 256);
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[0], Phase::forward, true), 0);
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[1], Phase::backward, true), 0);  // no bias
  // Group norm: mean and rstd per (n, group) = 2 x 2 x 2 floats forward; backward adds the
  // per-channel partial sums of its parameter gradients.
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[2], Phase::forward, true), 256);
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[2], Phase::backward, true), 256 + 256);
  EXPECT_EQ(kernel_workspace_bytes(g, g.ops[3], Phase::backward, true), 0);
}

TEST(CudaTimingStart, AnEagerTimingStartsAtTheFirstLaunchOfTheRegion) {
  FirstLaunchStart mark;
  int starts = 0;
  mark.before_launch();  // outside a timed region: nothing happens
  EXPECT_EQ(starts, 0);
  mark.arm([&] { ++starts; });
  EXPECT_EQ(starts, 0) << "arming records nothing: the host's set-up before the first launch is not timed";
  mark.before_launch();
  mark.before_launch();
  EXPECT_EQ(starts, 1) << "once per region, at the first launch";
  EXPECT_TRUE(mark.disarm());
  mark.before_launch();
  EXPECT_EQ(starts, 1) << "after the region, launches start nothing";
  mark.arm([&] { ++starts; });
  EXPECT_FALSE(mark.disarm()) << "a region that launched nothing says so (the caller starts an empty interval)";
  EXPECT_EQ(starts, 1);
}

TEST(NvmlClock, ReasonBitsHaveNvmlsNames) {
  EXPECT_TRUE(clock_limit_names(0).empty());
  EXPECT_EQ(clock_limit_names(0x4), std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(clock_limit_names(0x60), (std::vector<std::string>{"sw_thermal_slowdown", "hw_thermal_slowdown"}));
  EXPECT_EQ(clock_limit_names(0x1001), (std::vector<std::string>{"gpu_idle", "0x1000"}));
}

TEST(NvmlClock, AnUnknownDeviceOrNoDriverIsExplainedNotThrown) {
  // Without a driver NVML does not load; with one, this bus id names no device.
  NvmlClock clock("ffff:ff:1f.7");
  ASSERT_TRUE(clock.unavailable().has_value());
  EXPECT_FALSE(clock.unavailable()->empty());
  EXPECT_FALSE(clock.read().has_value());
}

TEST(CudnnGraphApi, AGraphChoiceNamesItsEngineAndTheRejected) {
  ConvAlgoChoice c{ConvDirection::forward,
                   0,
                   CUDNN_DEFAULT_MATH,
                   true,
                   1024,
                   -1.0f,
                   {},
                   {},
                   {"engine 7 (tensor cores): tensor cores (TF32) for float32"},
                   "engine 3"};
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j.at("engine"), "engine 3");
  EXPECT_FALSE(j.contains("algo"));
  EXPECT_FALSE(j.contains("math"));
  EXPECT_EQ(j.at("workspace_bytes"), 1024);
  EXPECT_EQ(j.at("rejected").size(), 1u);
  // A graph candidate's failure is named by its engine in fallback messages.
  ScriptedCalls script;
  script.status[0] = CUDNN_STATUS_NOT_SUPPORTED;
  const std::vector<ConvAlgoCandidate> engines = {{0, CUDNN_DEFAULT_MATH, true, 0, -1.0f, "engine 3"},
                                                  {1, CUDNN_DEFAULT_MATH, true, 0, -1.0f, "engine 9"}};
  const FallbackResult r = run_with_fallback(engines, 0, 0, ConvDirection::forward, forward_call, script.calls());
  EXPECT_EQ(r.ran, 1u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], "engine 3: status 3000");
}

}  // namespace
}  // namespace convbench::cuda

#else

TEST(CudaHost, NotBuilt) { GTEST_SKIP() << "convbench was built without the CUDA backend"; }

#endif

// The CUDA backend on a GPU, against the reference backend as the oracle. Every suite here is
// named Gpu* (parameterised ones instantiated as Gpu/...), which is how scripts/gpu-check.sh
// selects them; on a GPU machine none of them may skip.
//  - every op case (2-D and 3-D, grouped, depthwise, strided, dilated, transposed, padded
//    windows) in float32, tf32, float16 and bfloat16, both layouts, training and inference:
//    outputs, saved tensors (exact dropout masks and max-pool indices), running statistics and
//    every gradient, from fresh random inputs, into outputs poisoned with NaN before each run;
//  - the riskiest cuDNN combinations (half and bfloat16 channels-last with groups or dilation,
//    3-D depthwise in NDHWC), each its own test, in heuristic and find mode;
//  - every variant of every spec in configs/ (shrunk to test sizes), whole training steps
//    through the executor: block output, parameter gradients and running statistics;
//  - cudnnFind mode, the recorded algorithm details, allocator statistics equal to the memory
//    model's prediction byte for byte, out-of-memory as a row status, CUDA-event timing.
// Loops over many cases run each case in its own try/catch and list every failing case (its
// name, input shape, dtype, layout and mode) at the end, so one exception does not hide the rest.
// Relative error ||cuda - reference|| / ||reference|| must stay within 1e-5 for float32 (TF32
// off), 3e-3 for tf32 (the reference rounds conv operands to TF32 as the tensor cores do) and
// 1e-2 for float16 / bfloat16. Without a usable GPU every test skips and prints why.
#include <gtest/gtest.h>

#include "memory_expectations.hpp"

#if CONVBENCH_WITH_CUDA

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "analysis/memory_model.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_event_timer.hpp"
#include "backends/reference/reference_backend.hpp"
#include "measure/variant_runner.hpp"
#include "ops/autograd_rules.hpp"
#include "pipeline/analyze.hpp"
#include "pipeline/compare.hpp"
#include "reference_op_harness.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "runtime/loss_scaler.hpp"
#include "shipped_configs.hpp"
#include "spec/spec_loader.hpp"
#include "test_blocks.hpp"
#include "value_agreement.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using cuda::CudaBackend;
using cuda::CudaBackendOptions;
using reftest::conv_attrs;
using Values = std::vector<double>;

#define REQUIRE_CUDA_DEVICE()                                                   \
  do {                                                                          \
    if (const auto why = cuda::cuda_unavailable_reason()) GTEST_SKIP() << *why; \
  } while (0)

double tolerance(DType dtype) {
  switch (dtype) {
    case DType::float32: return 1e-5;
    case DType::tf32: return 3e-3;
    default: return 1e-2;
  }
}

using testing::l2_norm;
using testing::relative_error;

void expect_close(const Values& actual, const Values& expected, double tol, const std::string& what) {
  const double err = relative_error(actual, expected);
  EXPECT_TRUE(err <= tol) << what << ": relative error " << err << " > " << tol << " (" << actual.size() << " vs "
                          << expected.size() << " values)";
}

// Poison for tensors a call must fill: NaN in floating-point ones, impossible values in masks (2)
// and indices (-7), so that anything left unwritten shows up.
void poison(Backend& backend, Tensor& t) {
  const double value = t.desc.dtype == DType::uint8   ? 2.0
                       : t.desc.dtype == DType::int64 ? -7.0
                                                      : std::numeric_limits<double>::quiet_NaN();
  upload(backend, t, Values(static_cast<size_t>(t.desc.numel()), value));
}

// ---- one op, directly through the Backend interface --------------------------------------------

// Host values for the inputs, parameters, buffers and upstream gradient of a graph's last op.
struct OpValues {
  std::vector<Values> inputs, params, buffers;
  Values grad_output;
};

OpValues random_op_values(const Graph& g, uint64_t seed) {
  const Op& op = g.ops.back();
  OpValues v;
  for (int i : op.inputs)
    v.inputs.push_back(reftest::random_values(static_cast<size_t>(g.desc(i).numel()), ++seed, -reftest::input_scale(op),
                                              reftest::input_scale(op)));
  for (int p : op.params)
    v.params.push_back(
        reftest::random_values(static_cast<size_t>(g.params[static_cast<size_t>(p)].desc.numel()), ++seed));
  reftest::keep_weight_away_from_zero(op, v.params);
  for (int b : op.buffers)  // positive, as running variances are
    v.buffers.push_back(
        reftest::random_values(static_cast<size_t>(g.buffers[static_cast<size_t>(b)].desc.numel()), ++seed, 0.5, 1.5));
  v.grad_output = reftest::random_values(static_cast<size_t>(g.desc(op.output).numel()), ++seed);
  return v;
}

struct OpResults {
  Values output;
  std::vector<Values> aux, buffers;
  std::vector<std::optional<Values>> grad_inputs;
  std::vector<Values> grad_params;
};

std::optional<Tensor> workspace(Backend& backend, const Graph& g, const Op& op, Phase phase, bool training) {
  const int64_t bytes = backend.workspace_bytes(g, op, phase, training);
  if (bytes <= 0) return std::nullopt;
  return make_tensor(backend.allocator(), TensorDesc{{bytes}, DType::uint8, Layout::channels_first},
                     MemoryCategory::workspace);
}

// Runs the graph's last op forward (and, in training, backward) on `backend` as the executor
// would call it: the same saved tensors, an input gradient only where the graph needs one, and
// the workspace the backend asks for.
OpResults run_op(Backend& backend, const Graph& g, const OpValues& v, bool training, uint64_t seed) {
  const Op& op = g.ops.back();
  Allocator& alloc = backend.allocator();
  std::vector<Tensor> inputs, params, buffers, aux;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    inputs.push_back(make_tensor(alloc, g.desc(op.inputs[i]), MemoryCategory::inputs));
    upload(backend, inputs.back(), v.inputs[i]);
  }
  for (size_t i = 0; i < op.params.size(); ++i) {
    params.push_back(make_tensor(alloc, g.params[static_cast<size_t>(op.params[i])].desc, MemoryCategory::parameters));
    upload(backend, params.back(), v.params[i]);
  }
  for (size_t i = 0; i < op.buffers.size(); ++i) {
    buffers.push_back(make_tensor(alloc, g.buffers[static_cast<size_t>(op.buffers[i])].desc, MemoryCategory::buffers));
    upload(backend, buffers.back(), v.buffers[i]);
  }
  Tensor output = make_tensor(alloc, g.desc(op.output), MemoryCategory::temporaries);
  poison(backend, output);
  if (training)
    for (const TensorDesc& d : aux_tensors(g, op)) {
      aux.push_back(make_tensor(alloc, d, MemoryCategory::saved));
      poison(backend, aux.back());
    }
  {
    std::optional<Tensor> ws = workspace(backend, g, op, Phase::forward, training);
    ForwardCall call{.graph = g,
                     .op = op,
                     .output = &output,
                     .training = training,
                     .seed = seed,
                     .workspace = ws ? ws->raw() : nullptr};
    for (const Tensor& t : inputs) call.inputs.push_back(&t);
    for (const Tensor& t : params) call.params.push_back(&t);
    for (Tensor& t : buffers) call.buffers.push_back(&t);
    for (Tensor& t : aux) call.aux.push_back(&t);
    backend.forward(call);
  }
  OpResults r;
  r.output = download(backend, output);
  for (const Tensor& t : aux) r.aux.push_back(download(backend, t));
  for (const Tensor& t : buffers) r.buffers.push_back(download(backend, t));
  if (!training || op.kind == OpKind::add) return r;  // the executor never calls add's backward

  const std::vector<bool> needs_grad = g.requires_grad();
  const SavedTensors saved = saved_tensors(op, inputs_requiring_grad(op, needs_grad));
  BackwardCall call{.graph = g, .op = op, .output = saved.output ? &output : nullptr};
  call.inputs.assign(op.inputs.size(), nullptr);
  for (int pos : saved.inputs) call.inputs[static_cast<size_t>(pos)] = &inputs[static_cast<size_t>(pos)];
  for (const Tensor& t : aux) call.aux.push_back(&t);
  for (const Tensor& t : params) call.params.push_back(&t);
  for (const Tensor& t : buffers) call.buffers.push_back(&t);  // a frozen conv's weight
  Tensor grad_output = make_tensor(alloc, g.desc(op.output), MemoryCategory::inputs);
  upload(backend, grad_output, v.grad_output);
  call.grad_output = &grad_output;
  std::vector<std::optional<Tensor>> grad_inputs(op.inputs.size());
  for (size_t pos = 0; pos < op.inputs.size(); ++pos) {
    const bool computed =
        needs_grad[static_cast<size_t>(op.inputs[pos])] && grad_flow(op, static_cast<int>(pos)) == GradFlow::compute;
    if (computed) {
      grad_inputs[pos] = make_tensor(alloc, g.desc(op.inputs[pos]), MemoryCategory::temporaries);
      poison(backend, *grad_inputs[pos]);
    }
    call.grad_inputs.push_back(computed ? &*grad_inputs[pos] : nullptr);
  }
  std::vector<Tensor> grad_params;
  for (const Tensor& p : params) {
    grad_params.push_back(make_tensor(alloc, p.desc, MemoryCategory::gradients));
    poison(backend, grad_params.back());
  }
  for (Tensor& t : grad_params) call.grad_params.push_back(&t);
  std::optional<Tensor> ws = workspace(backend, g, op, Phase::backward, true);
  call.workspace = ws ? ws->raw() : nullptr;
  backend.backward(call);
  for (auto& t : grad_inputs) r.grad_inputs.push_back(t ? std::optional(download(backend, *t)) : std::nullopt);
  for (const Tensor& t : grad_params) r.grad_params.push_back(download(backend, t));
  return r;
}

// The op case with its inputs produced by a 1x1 conv, so that the graph asks for their
// gradients (the block input needs none); the harness feeds the op its own values anyway.
Graph build_case_with_input_grads(const reftest::OpCase& c, DType dtype, Layout layout) {
  GraphBuilder b(c.name, TensorDesc{c.input_shape, dtype, layout});
  const int64_t channels = c.input_shape[1];
  const size_t dims = c.input_shape.size() - 2;
  const int pre = b.conv("pre", b.input(),
                         conv_attrs(channels, std::vector<int64_t>(dims, 1), std::vector<int64_t>(dims, 1),
                                    std::vector<int64_t>(dims, 0), std::vector<int64_t>(dims, 1), 1, true));
  return b.finish(c.build(b, pre));
}

void compare_op(CudaBackend& gpu, const Graph& g, bool training, const std::string& what) {
  SCOPED_TRACE(what + (training ? " train" : " infer"));
  ReferenceBackend ref;
  const OpValues v = random_op_values(g, 17);
  const OpResults want = run_op(ref, g, v, training, 0x5eed);
  const OpResults got = run_op(gpu, g, v, training, 0x5eed);
  const double tol = tolerance(g.desc(g.ops.back().output).dtype);
  expect_close(got.output, want.output, tol, "output");
  ASSERT_EQ(got.aux.size(), want.aux.size());
  const std::vector<TensorDesc> aux = training ? aux_tensors(g, g.ops.back()) : std::vector<TensorDesc>{};
  for (size_t i = 0; i < got.aux.size(); ++i) {
    if (aux[i].dtype == DType::uint8 || aux[i].dtype == DType::int64)
      EXPECT_EQ(got.aux[i], want.aux[i]) << "saved tensor " << i << " (mask or indices) differs";
    else
      expect_close(got.aux[i], want.aux[i], tol, "saved statistics " + std::to_string(i));
  }
  for (size_t i = 0; i < got.buffers.size(); ++i)
    expect_close(got.buffers[i], want.buffers[i], tol, "running statistics " + std::to_string(i));
  ASSERT_EQ(got.grad_inputs.size(), want.grad_inputs.size());
  for (size_t i = 0; i < got.grad_inputs.size(); ++i) {
    ASSERT_EQ(got.grad_inputs[i].has_value(), want.grad_inputs[i].has_value());
    if (got.grad_inputs[i])
      expect_close(*got.grad_inputs[i], *want.grad_inputs[i], tol, "grad input " + std::to_string(i));
  }
  ASSERT_EQ(got.grad_params.size(), want.grad_params.size());
  for (size_t i = 0; i < got.grad_params.size(); ++i)
    expect_close(got.grad_params[i], want.grad_params[i], tol, "grad param " + std::to_string(i));
}

constexpr DType kGpuDtypes[] = {DType::float32, DType::tf32, DType::float16, DType::bfloat16};
constexpr Layout kLayouts[] = {Layout::channels_first, Layout::channels_last};

// One case of a test that loops over many: the case's name with its input shape, dtype, layout
// and mode. Runs `check` in its own try/catch, so that an exception fails this case and the loop
// goes on; at the end, report() lists every failing case, not only the first.
class CaseLog {
 public:
  template <class F>
  void run(const std::string& what, F&& check) {
    ++cases_;
    const int before = parts();
    try {
      check();
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": threw: " << e.what();
    }
    if (parts() > before) failed_.push_back(what);
  }
  void report() const {
    std::printf("[          ] %zu of %d cases failed\n", failed_.size(), cases_);
    for (const std::string& f : failed_) std::printf("[  FAILED  ] case: %s\n", f.c_str());
  }

 private:
  static int parts() { return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count(); }
  int cases_ = 0;
  std::vector<std::string> failed_;
};

std::string case_name(const std::string& name, const Graph& g, bool training) {
  const TensorDesc& in = g.desc(g.ops.back().inputs.at(0));
  return name + " input " + in.shape_string() + " " + std::string(to_string(in.dtype)) + " " +
         std::string(to_string(in.layout)) + (training ? " train" : " infer");
}

TEST(GpuOps, EveryOpCaseMatchesTheReference) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  CaseLog log;
  for (const reftest::OpCase& c : reftest::op_cases())
    for (DType dtype : kGpuDtypes)
      for (Layout layout : kLayouts)
        for (bool training : {true, false}) {
          const Graph g = build_case_with_input_grads(c, dtype, layout);
          const std::string what = case_name(c.name, g, training);
          log.run(what, [&] { compare_op(gpu, g, training, what); });
        }
  log.report();
  EXPECT_EQ(gpu.allocator().stats().current, 0) << "tensors leaked";
}

// The combinations most likely to find a cuDNN algorithm that refuses at run time, or a kernel of
// ours with a layout bug: half and bfloat16 with channels-last 2-D and 3-D tensors and groups or
// dilation, and 3-D depthwise convolutions in NDHWC. Each is its own test, forward and backward,
// training and inference, in heuristic and find mode.
struct RiskyConv {
  std::string name;
  DType dtype;
  std::vector<int64_t> input_shape;
  int64_t out_channels, groups;
  std::vector<int64_t> kernel, stride, padding, dilation;
};

void PrintTo(const RiskyConv& c, std::ostream* os) { *os << c.name; }

class GpuRiskyConvs : public ::testing::TestWithParam<RiskyConv> {};

TEST_P(GpuRiskyConvs, MatchTheReferenceInBothAlgorithmModes) {
  REQUIRE_CUDA_DEVICE();
  const RiskyConv& c = GetParam();
  const reftest::OpCase op{
      c.name, c.input_shape, [&c](GraphBuilder& b, int x) {
        return b.conv("conv", x, conv_attrs(c.out_channels, c.kernel, c.stride, c.padding, c.dilation, c.groups, true));
      }};
  CaseLog log;
  for (cuda::CudnnAlgoMode mode : {cuda::CudnnAlgoMode::heuristic, cuda::CudnnAlgoMode::find}) {
    CudaBackendOptions options;
    options.cudnn_algo = mode;
    CudaBackend gpu(options);
    const Graph g = build_case_with_input_grads(op, c.dtype, Layout::channels_last);
    for (bool training : {true, false}) {
      const std::string what = case_name(c.name, g, training) + " " + std::string(cuda::to_string(mode));
      log.run(what, [&] { compare_op(gpu, g, training, what); });
    }
  }
  log.report();
}

std::vector<RiskyConv> risky_convs() {
  std::vector<RiskyConv> out;
  for (DType dtype : {DType::float16, DType::bfloat16}) {
    const std::string t = std::string(to_string(dtype));
    out.push_back({t + "_nhwc_grouped", dtype, {2, 8, 9, 9}, 16, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}});
    out.push_back({t + "_nhwc_dilated", dtype, {2, 8, 11, 10}, 8, 1, {3, 3}, {1, 1}, {2, 2}, {2, 2}});
    out.push_back({t + "_nhwc_grouped_dilated_strided", dtype, {2, 8, 12, 11}, 12, 2, {3, 3}, {2, 2}, {2, 1}, {2, 1}});
    out.push_back({t + "_nhwc_depthwise", dtype, {2, 8, 9, 9}, 8, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}});
    out.push_back({t + "_ndhwc_grouped", dtype, {1, 8, 5, 6, 5}, 8, 2, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}});
    out.push_back({t + "_ndhwc_dilated", dtype, {1, 4, 7, 6, 7}, 8, 1, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2}});
  }
  for (DType dtype : {DType::float32, DType::tf32, DType::float16, DType::bfloat16})
    out.push_back({std::string(to_string(dtype)) + "_ndhwc_depthwise",
                   dtype,
                   {2, 8, 6, 6, 6},
                   8,
                   8,
                   {3, 3, 3},
                   {1, 1, 1},
                   {1, 1, 1},
                   {1, 1, 1}});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuRiskyConvs, ::testing::ValuesIn(risky_convs()),
                         [](const ::testing::TestParamInfo<RiskyConv>& info) { return info.param.name; });

// Every depthwise case of the catalogue through both paths --depthwise-conv chooses between
// (convbench's kernels and cuDNN), every dtype and layout, training and inference; the op details
// say which ran, and the own kernels' weight gradient is the same bits in two runs (fixed-order
// sums, no atomics).
TEST(GpuDepthwise, EveryDepthwiseCaseMatchesTheReferenceOnEitherPath) {
  REQUIRE_CUDA_DEVICE();
  CaseLog log;
  for (cuda::DepthwiseConvPath path : {cuda::DepthwiseConvPath::own, cuda::DepthwiseConvPath::cudnn}) {
    CudaBackendOptions options;
    options.depthwise_conv = path;
    CudaBackend gpu(options);
    for (const reftest::OpCase& c : reftest::op_cases()) {
      const Graph probe = reftest::build_case(c, DType::float32, Layout::channels_first);
      if (!cuda::is_depthwise_conv(probe, probe.ops.back())) continue;
      for (DType dtype : kGpuDtypes)
        for (Layout layout : kLayouts)
          for (bool training : {true, false}) {
            const Graph g = build_case_with_input_grads(c, dtype, layout);
            const std::string what = case_name(c.name, g, training) + " " + std::string(cuda::to_string(path));
            log.run(what, [&] {
              gpu.clear_op_details();
              compare_op(gpu, g, training, what);
              const nlohmann::json d = gpu.op_details().at(g.ops.back().name);
              EXPECT_EQ(d.at("api"), path == cuda::DepthwiseConvPath::own ? "convbench-depthwise" : "cudnn-legacy")
                  << d.dump();
              if (path == cuda::DepthwiseConvPath::own && training && !g.ops.back().params.empty()) {
                const OpValues v = random_op_values(g, 5);
                const OpResults a = run_op(gpu, g, v, true, 1), b = run_op(gpu, g, v, true, 1);
                EXPECT_EQ(a.grad_params.at(0), b.grad_params.at(0)) << "weight gradient differs between runs";
              }
            });
          }
    }
  }
  log.report();
}

// The linear op's two paths (--linear): cuBLAS's GEMMs and convbench's kernels, every linear case
// of the catalogue, every dtype and layout, training and inference.
TEST(GpuLinear, EveryLinearCaseMatchesTheReferenceOnEitherPath) {
  REQUIRE_CUDA_DEVICE();
  CaseLog log;
  for (cuda::LinearPath path : {cuda::LinearPath::own, cuda::LinearPath::cublas}) {
    if (path == cuda::LinearPath::cublas && !cuda::cublas_available()) {
      std::printf("[          ] --linear cublas not checked: this build has no cuBLAS\n");
      continue;
    }
    CudaBackendOptions options;
    options.linear = path;
    CudaBackend gpu(options);
    for (const reftest::OpCase& c : reftest::op_cases()) {
      if (reftest::build_case(c, DType::float32, Layout::channels_first).ops.back().kind != OpKind::linear) continue;
      for (DType dtype : kGpuDtypes)
        for (Layout layout : kLayouts)
          for (bool training : {true, false}) {
            const Graph g = build_case_with_input_grads(c, dtype, layout);
            const std::string what = case_name(c.name, g, training) + " " + std::string(cuda::to_string(path));
            log.run(what, [&] { compare_op(gpu, g, training, what); });
          }
    }
  }
  log.report();
}

// --cudnn-api graph: every conv and conv_transpose case of the catalogue through cuDNN's graph
// API (engines from its heuristics, filtered by their notes), every dtype and layout, training
// and inference; the op details name the engine of each direction.
TEST(GpuCudnnGraph, EveryConvCaseMatchesTheReference) {
  REQUIRE_CUDA_DEVICE();
  CudaBackendOptions options;
  options.cudnn_api = cuda::CudnnApi::graph;
  options.depthwise_conv = cuda::DepthwiseConvPath::cudnn;  // depthwise convs through cuDNN too
  CudaBackend gpu(options);
  CaseLog log;
  for (const reftest::OpCase& c : reftest::op_cases()) {
    const OpKind kind = reftest::build_case(c, DType::float32, Layout::channels_first).ops.back().kind;
    if (kind != OpKind::conv && kind != OpKind::conv_transpose) continue;
    for (DType dtype : kGpuDtypes)
      for (Layout layout : kLayouts)
        for (bool training : {true, false}) {
          const Graph g = build_case_with_input_grads(c, dtype, layout);
          const std::string what = case_name(c.name + " graph api", g, training);
          log.run(what, [&] {
            gpu.clear_op_details();
            compare_op(gpu, g, training, what);
            const nlohmann::json d = gpu.op_details().at(g.ops.back().name);
            EXPECT_EQ(d.at("api"), "cudnn-graph") << d.dump();
            for (const char* dir : {"forward", "backward_data", "backward_filter"})
              if (d.contains(dir)) {
                EXPECT_TRUE(d.at(dir).contains("engine")) << d.dump();
              }
          });
        }
  }
  log.report();
}

TEST(GpuOps, ConvsOnTheBlockInputSkipTheDataGradient) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  CaseLog log;
  for (const reftest::OpCase& c : reftest::op_cases()) {
    const Graph probe = reftest::build_case(c, DType::float32, Layout::channels_first);
    const OpKind kind = probe.ops.back().kind;
    if (kind != OpKind::conv && kind != OpKind::conv_transpose) continue;
    for (Layout layout : kLayouts) {
      const Graph g = reftest::build_case(c, DType::float32, layout);
      const std::string what = case_name(c.name + " on the block input", g, true);
      log.run(what, [&] {
        ASSERT_FALSE(g.requires_grad()[static_cast<size_t>(g.ops.back().inputs[0])]);
        compare_op(gpu, g, true, what);
        // The backward workspace is the filter gradient's alone; a frozen conv's weight is a
        // buffer, so it has none.
        gpu.clear_op_details();
        run_op(gpu, g, random_op_values(g, 3), true, 1);
        const nlohmann::json d = gpu.op_details().at(g.ops.back().name);
        if (d.at("api") == "convbench-depthwise") {  // --depthwise-conv auto: channels-first ones
          EXPECT_EQ(d.contains("weight_grad_chunks"), !g.ops.back().params.empty()) << d.dump();
          return;
        }
        EXPECT_EQ(d.contains("backward_filter"), !g.ops.back().params.empty()) << d.dump();
        EXPECT_FALSE(d.contains(kind == OpKind::conv ? "backward_data" : "forward")) << d.dump();
      });
    }
  }
  log.report();
}

TEST(GpuOps, FindModeMatchesTheReferenceAndRecordsItsTimings) {
  REQUIRE_CUDA_DEVICE();
  CudaBackendOptions options;
  options.cudnn_algo = cuda::CudnnAlgoMode::find;
  CudaBackend gpu(options);
  CaseLog log;
  for (const reftest::OpCase& c : reftest::op_cases()) {
    const Graph probe = reftest::build_case(c, DType::float32, Layout::channels_first);
    if (probe.ops.back().kind != OpKind::conv && probe.ops.back().kind != OpKind::conv_transpose) continue;
    for (DType dtype : {DType::float32, DType::bfloat16}) {
      const Graph g = build_case_with_input_grads(c, dtype, Layout::channels_last);
      const std::string what = case_name(c.name + " find", g, true);
      log.run(what, [&] {
        gpu.clear_op_details();
        compare_op(gpu, g, true, what);
        const nlohmann::json d = gpu.op_details().at(g.ops.back().name);
        EXPECT_EQ(d.at("mode"), "find");
        for (const char* dir : {"forward", "backward_data", "backward_filter"}) {
          // A frozen conv trains no weight: no filter gradient to find an algorithm for.
          if (std::string(dir) == "backward_filter" && g.ops.back().params.empty()) {
            EXPECT_FALSE(d.contains(dir)) << d.dump();
            continue;
          }
          ASSERT_TRUE(d.contains(dir)) << d.dump();
          // Every result cuDNN returned and convbench did not take, with why, in the log.
          if (d.at(dir).contains("rejected"))
            for (const auto& r : d.at(dir).at("rejected"))
              std::printf("[          ] %s %s: rejected %s\n", what.c_str(), dir, r.get<std::string>().c_str());
          // Where cudnnFind returned nothing usable, the heuristic's choice ran and says why. Seen
          // only for 3-D channels-last problems (H200, cuDNN 9.19); anywhere else it is a failure
          // of find mode, not an accepted outcome.
          if (d.at(dir).contains("find_found_none")) {
            EXPECT_FALSE(d.at(dir).contains("find_ms")) << d.dump();
            EXPECT_EQ(g.desc(g.input).rank(), 5) << dir << ": cudnnFind found nothing usable for a 2-D problem: "
                                                 << d.at(dir).at("find_found_none").get<std::string>();
          } else {
            EXPECT_GE(d.at(dir).at("find_ms").get<double>(), 0.0) << d.dump();
          }
          if (dtype == DType::float32) {
            EXPECT_EQ(d.at(dir).at("math"), "FMA_MATH") << d.dump();
          }
        }
      });
    }
  }
  log.report();
}

TEST(GpuOps, OpDetailsMatchTheWorkspaceTheExecutorAllocates) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  for (Layout layout : kLayouts) {
    GraphBuilder b("w", TensorDesc{{2, 8, 12, 12}, DType::float32, layout});
    const int c0 = b.conv("c0", b.input(), conv_attrs(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false));
    const Graph g = b.finish(b.conv("c1", c0, conv_attrs(16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)));
    gpu.clear_op_details();
    ResultRow row;
    RunOptions run;
    run.time = false;
    run_variant(g, true, gpu, run, row);
    ASSERT_EQ(row.status, RunStatus::ok) << row.message;
    const nlohmann::json d = gpu.op_details();
    // The 3x3 filters are stored in the block's layout (ParamDecl::layout): no step converts them.
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(g.conv_weight(g.ops[i]).layout, layout);
    for (size_t i = 0; i < 2; ++i) {
      const Op& o = g.ops[i];
      SCOPED_TRACE(o.name + " " + std::string(to_string(layout)));
      const nlohmann::json& op = d.at(o.name);
      EXPECT_EQ(op.at("api"), "cudnn-legacy");
      EXPECT_EQ(op.at("mode"), "heuristic");
      EXPECT_EQ(op.at("weight_layout_conversion"), false);
      EXPECT_EQ(op.at("forward").at("math"), "FMA_MATH");
      const int64_t fwd = op.at("forward").at("workspace_bytes").get<int64_t>();
      EXPECT_EQ(gpu.workspace_bytes(g, o, Phase::forward, true), cuda::conv_workspace_layout(0, 0, {fwd}).total);
    }
    EXPECT_FALSE(d.at("c0").contains("backward_data"));  // c0 reads the block input
    EXPECT_TRUE(d.at("c1").contains("backward_data"));
  }
}

// ---- accumulate, add, host copies ----------------------------------------------------------------

TEST(GpuBackendBasics, AccumulateAndAddAcrossDtypesAndLayouts) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  const TensorDesc half{{2, 3, 2, 5}, DType::float16, Layout::channels_last};
  const TensorDesc single{{2, 3, 2, 5}, DType::float32, Layout::channels_first};
  const Values a = reftest::quantize(reftest::random_values(60, 1), DType::float16);
  const Values b = reftest::quantize(reftest::random_values(60, 2), DType::float16);
  Tensor ta = make_tensor(gpu.allocator(), half, MemoryCategory::temporaries);
  Tensor tb = make_tensor(gpu.allocator(), half, MemoryCategory::temporaries);
  Tensor out = make_tensor(gpu.allocator(), single, MemoryCategory::temporaries);
  upload(gpu, ta, a);
  upload(gpu, tb, b);
  gpu.add(out, ta, tb);
  Values sum(60);
  for (size_t i = 0; i < 60; ++i) sum[i] = a[i] + b[i];
  EXPECT_EQ(download(gpu, out), reftest::quantize(sum, DType::float32));
  gpu.accumulate(ta, tb);
  EXPECT_EQ(download(gpu, ta), reftest::quantize(sum, DType::float16));
  gpu.accumulate(out, ta);  // float32 channels-first += float16 channels-last
  Values twice(60);
  for (size_t i = 0; i < 60; ++i)
    twice[i] = reftest::quantize({sum[i]}, DType::float32)[0] + reftest::quantize({sum[i]}, DType::float16)[0];
  EXPECT_EQ(download(gpu, out), reftest::quantize(twice, DType::float32));
  Tensor wrong = make_tensor(gpu.allocator(), TensorDesc{{2, 3, 2, 4}, DType::float16, Layout::channels_last},
                             MemoryCategory::temporaries);
  EXPECT_THROW(gpu.accumulate(wrong, tb), std::invalid_argument);
}

TEST(GpuBackendBasics, HostCopiesAreRawBytesAndFillPoisons) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  const TensorDesc d{{1, 2, 3, 3}, DType::bfloat16, Layout::channels_last};
  Tensor t = make_tensor(gpu.allocator(), d, MemoryCategory::inputs);
  EXPECT_TRUE(t.storage->on_device());
  std::vector<unsigned char> in(static_cast<size_t>(d.bytes())), out(in.size(), 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  gpu.copy_from_host(t, in.data());
  gpu.copy_to_host(t, out.data());
  EXPECT_EQ(out, in);
  gpu.fill(t, std::numeric_limits<double>::quiet_NaN());
  for (double v : download(gpu, t)) EXPECT_TRUE(std::isnan(v));
  gpu.fill(t, 1.5);
  for (double v : download(gpu, t)) EXPECT_EQ(v, 1.5);
}

// ---- whole variants of configs/ ------------------------------------------------------------------

struct StepResult {
  Values output;
  std::vector<Values> grads, buffers;
};

StepResult training_step(Backend& backend, const Graph& g, bool training) {
  Executor ex(g, backend, training);
  ex.set_dropout_seed(77);
  ModelState s = ex.init_state(7);
  Tensor x = make_tensor(backend.allocator(), g.desc(g.input), MemoryCategory::inputs);
  fill_uniform(backend, x, 11);
  StepResult r;
  Tensor y = ex.forward(s, x);
  r.output = download(backend, y);
  if (training) {
    Tensor dy = make_tensor(backend.allocator(), g.desc(g.output), MemoryCategory::inputs);
    fill_uniform(backend, dy, 13);
    ex.backward(s, dy);
    for (const Tensor& grad : s.grads) r.grads.push_back(download(backend, grad));
  }
  for (const Tensor& b : s.buffers) r.buffers.push_back(download(backend, b));
  return r;
}

// The floor each parameter's gradient is judged against: the largest gradient of its own op. A
// conv bias right before a batch norm has a zero gradient up to rounding (the norm removes the
// mean), so its own norm is noise; the op's weight gradient is the scale its rounding belongs to.
std::vector<double> gradient_floors(const Graph& g, const std::vector<Values>& grads) {
  std::vector<double> floors(grads.size(), 0.0);
  for (size_t p = 0; p < grads.size(); ++p)
    for (size_t q = 0; q < grads.size(); ++q)
      if (g.params[q].op == g.params[p].op) floors[p] = std::max(floors[p], l2_norm(grads[q]));
  return floors;
}

// A GPU step against the reference's step in the same dtype: within the dtype's tolerance, or,
// in a reduced-precision dtype, by the rule of value_agreement.hpp against the float64 step of
// the same block, which `truth` computes only when a comparison needs it (the first call; it is
// the slow part of the check).
using TruthStep = std::function<const StepResult*()>;

void expect_step_close(const Graph& g, const StepResult& got, const StepResult& want, const TruthStep& truth,
                       DType dtype) {
  testing::StepAgreement rule;
  rule.tolerance = tolerance(dtype);
  auto check = [&](const Values& a, const Values& w, const std::function<const Values*()>& t, double floor,
                   const std::string& what) {
    rule.floor = floor;
    if (const auto why = testing::reduced_precision_disagreement(a, w, t, rule))
      ADD_FAILURE() << what << " in " << to_string(dtype) << ": " << *why << " (" << a.size() << " values)";
  };
  auto part = [&](auto pick) -> std::function<const Values*()> {
    return [&truth, pick]() -> const Values* {
      const StepResult* t = truth ? truth() : nullptr;
      return t ? pick(*t) : nullptr;
    };
  };
  check(got.output, want.output, part([](const StepResult& t) { return &t.output; }), 0.0, "block output");
  ASSERT_EQ(got.grads.size(), want.grads.size());
  // Floors from the reference's gradients (the float64 step is not computed for them).
  const std::vector<double> floors = gradient_floors(g, want.grads);
  for (size_t p = 0; p < got.grads.size(); ++p)
    check(got.grads[p], want.grads[p],
          part([p](const StepResult& t) { return p < t.grads.size() ? &t.grads[p] : nullptr; }), floors[p],
          g.params[p].name);
  ASSERT_EQ(got.buffers.size(), want.buffers.size());
  for (size_t b = 0; b < got.buffers.size(); ++b)
    check(got.buffers[b], want.buffers[b],
          part([b](const StepResult& t) { return b < t.buffers.size() ? &t.buffers[b] : nullptr; }), 0.0,
          g.buffers[b].name);
}

// The reference's step of the block in float64, computed on the first call and kept.
TruthStep cached_float64_step(BlockSpec block, const VariantSpec& v, bool training) {
  block.dtype = DType::float64;
  auto cached = std::make_shared<std::optional<StepResult>>();
  return [cached, block, v, training]() -> const StepResult* {
    if (!*cached) {
      ReferenceBackend ref;
      *cached = training_step(ref, build_variant_graph(block, v), training);
    }
    return &**cached;
  };
}

// The float64 step of the same block when `dtype` rounds more than float32 does; a getter
// returning nullptr otherwise.
TruthStep float64_step(const BlockSpec& block, const VariantSpec& v, bool training) {
  if (block.dtype == DType::float32 || block.dtype == DType::float64) return [] { return nullptr; };
  return cached_float64_step(block, v, training);
}

// The block at test size: batch at most 2, spatial size at most 16 (2-D) or 8 (3-D).
BlockSpec shrunk(BlockSpec b) {
  b.batch = std::min<int64_t>(b.batch, 2);
  // A network's downsampling stages need more: 16 voxels a side (VBNet halves four times).
  for (int64_t& s : b.size) s = std::min<int64_t>(s, b.network ? (b.dims == 2 ? 32 : 16) : b.dims == 2 ? 16 : 8);
  return b;
}

std::vector<std::string> config_files() { return shipped_configs(); }

TEST(GpuVariants, EveryConfigVariantMatchesTheReference) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  CaseLog log;
  const std::vector<std::string> files = config_files();
  ASSERT_FALSE(files.empty());
  int checked = 0;
  for (const std::string& file : files) {
    const Spec spec = load_spec_file(file);
    for (const BlockSpec& original : spec.blocks) {
      for (DType dtype : kGpuDtypes) {
        // float32 in both layouts; the reduced-precision types in the block's own layout.
        std::vector<Layout> layouts = {original.layout};
        if (dtype == DType::float32)
          layouts.push_back(original.layout == Layout::channels_first ? Layout::channels_last : Layout::channels_first);
        for (Layout layout : layouts) {
          BlockSpec block = shrunk(original);
          block.dtype = dtype;
          block.layout = layout;
          const bool training = block.mode == RunMode::train;
          for (const VariantSpec& v : block.variants) {
            // An AMP variant keeps float32 storage and casts per op: GpuAmp checks it.
            if (precision_of(block, v).precision != Precision::plain) continue;
            const Graph g = build_variant_graph(block, v);
            const std::string what = std::filesystem::path(file).filename().string() + " " + block.name + " [" +
                                     point_label(block) + "] " + v.name + " input " + g.desc(g.input).shape_string() +
                                     " " + std::string(to_string(dtype)) + " " + std::string(to_string(layout)) +
                                     (training ? " train" : " infer");
            log.run(what, [&] {
              SCOPED_TRACE(what);
              ReferenceBackend ref;
              const StepResult want = training_step(ref, g, training);
              gpu.clear_op_details();
              const StepResult got = training_step(gpu, g, training);
              // The reference rounds tf32 conv operands as tensor cores do; an algorithm that ran
              // with FMA_MATH did not round them. On a mismatch, the choices say which did.
              SCOPED_TRACE(dtype == DType::tf32 ? "cuDNN choices: " + gpu.op_details().dump() : std::string());
              expect_step_close(g, got, want, float64_step(block, v, training), dtype);
            });
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
  std::printf("[          ] %d config variants checked against the reference\n", checked);
  log.report();
}

// Block options the configs do not use: strided residual blocks with group norm and leaky ReLU,
// identity residuals with dropout, grouped bottlenecks, in 2-D and 3-D.
TEST(GpuVariants, BlockOptionsBeyondTheConfigsMatchTheReference) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  CaseLog log;
  for (int dims : {2, 3})
    for (Layout layout : kLayouts)
      for (DType dtype : {DType::float32, DType::bfloat16}) {
        BlockSpec strided = testing::small_block(dims, 4, 8, dims == 2 ? 8 : 4);
        strided.stride.assign(static_cast<size_t>(dims), 2);
        strided.residual = true;
        strided.norm = NormKind::group;
        strided.norm_groups = 2;
        strided.act = ActKind::leaky_relu;
        BlockSpec identity = testing::small_block(dims, 8, 8, dims == 2 ? 8 : 4);
        identity.residual = true;
        identity.dropout = 0.25;
        VariantSpec bottleneck = testing::variant("bottleneck");
        bottleneck.kind_parameters = BottleneckParameters{.ratio = 2, .groups = 2};
        for (BlockSpec block : {strided, identity})
          for (const VariantSpec& v : {testing::variant("standard"), bottleneck, testing::variant("separable")}) {
            block.dtype = dtype;
            block.layout = layout;
            const Graph g = build_variant_graph(block, v);
            const std::string what = v.name + (block.dropout > 0 ? " dropout" : " strided") + " input " +
                                     g.desc(g.input).shape_string() + " " + std::string(to_string(dtype)) + " " +
                                     std::string(to_string(layout));
            log.run(what, [&] {
              SCOPED_TRACE(what);
              ReferenceBackend ref;
              const StepResult want = training_step(ref, g, true);
              const StepResult got = training_step(gpu, g, true);
              expect_step_close(g, got, want, float64_step(block, v, true), dtype);
            });
          }
      }
  log.report();
}

// Where cuDNN's runtime-fusion engines (tensor-core engines, which want NHWC) should fuse on any
// GPU the check runs on (sm_80 and later): 2-D, bfloat16, channels-last. Elsewhere (float32,
// which may not run on tensor cores; channels-first) unfused is an answer, not a failure, but a
// fused path that never runs even here would pass unnoticed.
bool where_fusion_is_expected(int dims, DType dtype, Layout layout) {
  return dims == 2 && dtype == DType::bfloat16 && layout == Layout::channels_last;
}

// --conv-fusion conv_act: blocks whose convs take the in-place activation after them (no norm
// between, memory_policy inplace_act), 2-D and 3-D, relu and leaky_relu, every GPU dtype, both
// layouts, training and inference. Fused where cuDNN has an engine, unfused (the activation's
// kernel after the conv's) where not: either way the step matches the reference, its memory the
// model's prediction, and each conv's op details say which ran and why.
TEST(GpuFusion, ConvActivationBlocksMatchTheReferenceFusedOrNot) {
  REQUIRE_CUDA_DEVICE();
  CudaBackendOptions options;
  options.cudnn_api = cuda::CudnnApi::graph;
  options.conv_fusion = ConvFusion::conv_act;
  CudaBackend gpu(options);
  CaseLog log;
  int fused = 0, unfused = 0, fused_where_expected = 0;
  for (int dims : {2, 3})
    for (DType dtype : kGpuDtypes)
      for (Layout layout : kLayouts)
        for (ActKind act : {ActKind::relu, ActKind::leaky_relu})
          for (bool training : {false, true}) {
            BlockSpec block = testing::small_block(dims, 8, 16, dims == 2 ? 8 : 4);
            block.norm = NormKind::none;
            block.act = act;
            block.dtype = dtype;
            block.layout = layout;
            block.mode = training ? RunMode::train : RunMode::infer;
            block.memory_policy.policy = MemoryPolicy::inplace_act;
            for (const char* kind : {"standard", "bottleneck"}) {
              const VariantSpec v = testing::variant(kind);
              const Graph g = build_variant_graph(block, v);
              const std::string what = std::string(kind) + " input " + g.desc(g.input).shape_string() + " " +
                                       std::string(to_string(dtype)) + " " + std::string(to_string(layout)) + " " +
                                       (act == ActKind::relu ? "relu" : "leaky_relu") +
                                       (training ? " train" : " infer");
              log.run(what, [&] {
                SCOPED_TRACE(what);
                ReferenceBackend ref;
                const StepResult want = training_step(ref, g, training);
                gpu.clear_op_details();
                const StepResult got = training_step(gpu, g, training);
                const nlohmann::json details = gpu.op_details();
                SCOPED_TRACE("op details: " + details.dump());
                expect_step_close(g, got, want, float64_step(block, v, training), dtype);
                testing::expect_measured_equals_predicted(gpu, g, training);
                for (size_t i = 0; i < g.ops.size(); ++i) {
                  if (!conv_act_fusion(g, static_cast<int>(i))) continue;
                  const nlohmann::json& d = details.at(g.ops[i].name);
                  ASSERT_TRUE(d.contains("fusion")) << g.ops[i].name;
                  if (d.at("fusion") == "fused") {
                    ++fused;
                    if (where_fusion_is_expected(dims, dtype, layout)) ++fused_where_expected;
                    EXPECT_TRUE(d.at("forward").contains("engine"));
                  } else {
                    ++unfused;
                    EXPECT_FALSE(d.at("fusion_unavailable").get<std::string>().empty());
                  }
                  EXPECT_EQ(details.at(g.ops[i + 1].name).at("taken_by"), g.ops[i].name);
                }
              });
            }
          }
  // What the device's cuDNN fused (the GPU session reads this line).
  std::printf("[          ] conv_act: %d convs ran fused, %d unfused (cuDNN had no fused engine)\n", fused, unfused);
  EXPECT_GT(fused + unfused, 0);
  EXPECT_GT(fused_where_expected, 0) << "no 2-D bfloat16 channels-last conv ran fused with its activation";
  log.report();
}

// --conv-fusion conv_bn_stats: training blocks whose convs write their output's per-channel sums
// for the batch norm after them (cuDNN GENSTATS), 2-D and 3-D, every GPU dtype, both layouts.
// Fused where cuDNN has an engine, unfused (the batch norm's own reduction) where not: either
// way the step and the running statistics match the reference, the memory the model's (which
// makes the batch norm's saved statistics before the conv), and the op details say which ran.
TEST(GpuFusion, ConvBatchNormStatisticsMatchTheReferenceFusedOrNot) {
  REQUIRE_CUDA_DEVICE();
  CudaBackendOptions options;
  options.cudnn_api = cuda::CudnnApi::graph;
  options.conv_fusion = ConvFusion::conv_bn_stats;
  CudaBackend gpu(options);
  CaseLog log;
  int fused = 0, unfused = 0, fused_where_expected = 0;
  for (int dims : {2, 3})
    for (DType dtype : kGpuDtypes)
      for (Layout layout : kLayouts) {
        BlockSpec block = testing::small_block(dims, 8, 16, dims == 2 ? 8 : 4);
        block.norm = NormKind::batch;
        block.dtype = dtype;
        block.layout = layout;
        block.mode = RunMode::train;
        for (const char* kind : {"standard", "bottleneck", "separable"}) {
          const VariantSpec v = testing::variant(kind);
          const Graph g = build_variant_graph(block, v);
          const std::string what = std::string(kind) + " input " + g.desc(g.input).shape_string() + " " +
                                   std::string(to_string(dtype)) + " " + std::string(to_string(layout));
          log.run(what, [&] {
            SCOPED_TRACE(what);
            ReferenceBackend ref;
            const StepResult want = training_step(ref, g, true);
            gpu.clear_op_details();
            const StepResult got = training_step(gpu, g, true);
            const nlohmann::json details = gpu.op_details();
            SCOPED_TRACE("op details: " + details.dump());
            expect_step_close(g, got, want, float64_step(block, v, true), dtype);
            testing::expect_measured_equals_predicted(gpu, g, true);
            int pairs = 0;
            for (size_t i = 0; i < g.ops.size(); ++i) {
              const int bn = gpu.fills_statistics_of(g, static_cast<int>(i));
              if (bn < 0) continue;
              ++pairs;
              const nlohmann::json& d = details.at(g.ops[i].name);
              ASSERT_TRUE(d.contains("fusion")) << g.ops[i].name;
              EXPECT_EQ(d.at("epilogue"), g.ops[i].conv.bias ? "bias+bn_stats" : "bn_stats");
              if (d.at("fusion") == "fused") {
                ++fused;
                if (where_fusion_is_expected(dims, dtype, layout)) ++fused_where_expected;
                EXPECT_TRUE(d.at("forward").contains("engine"));
              } else {
                ++unfused;
                EXPECT_FALSE(d.at("fusion_unavailable").get<std::string>().empty());
              }
              EXPECT_EQ(details.at(g.ops[static_cast<size_t>(bn)].name).at("statistics_from"), g.ops[i].name);
            }
            EXPECT_GT(pairs, 0);
          });
        }
      }
  // What the device's cuDNN fused (the GPU session reads this line).
  std::printf("[          ] conv_bn_stats: %d convs ran fused, %d unfused (cuDNN had no fused engine)\n", fused,
              unfused);
  EXPECT_GT(fused + unfused, 0);
  EXPECT_GT(fused_where_expected, 0) << "no 2-D bfloat16 channels-last conv ran fused with its batch norm's sums";
  log.report();
}

// ---- mixed precision: CUDA autocast's step against the reference's -------------------------------

// The float64 step of an AMP block's plain float32 variant, computed on the first call and kept:
// the truth an AMP step's rounding is judged against (its parameter gradients are float32,
// unscaled, so of the same magnitude).
TruthStep plain_float64_step(BlockSpec block, VariantSpec v, bool training) {
  block.precision = PrecisionChoice{};
  v.precision.reset();
  return cached_float64_step(block, v, training);
}

// One AMP block on the GPU against the reference's AMP step (which rounds every tensor to the
// dtype PyTorch stores it in), both built with CUDA autocast's rules.
void expect_amp_step_matches(CudaBackend& gpu, BlockSpec block, const VariantSpec& v, CaseLog& log,
                             const std::string& label) {
  block.autocast_device = AutocastDevice::cuda;
  const bool training = block.mode == RunMode::train;
  const Precision mode = precision_of(block, v).precision;
  const Graph g = build_variant_graph(block, v);
  const std::string what = label + " " + v.name + " input " + g.desc(g.input).shape_string() + " " +
                           std::string(to_string(mode)) + " " + std::string(to_string(block.layout)) +
                           (training ? " train" : " infer");
  log.run(what, [&] {
    SCOPED_TRACE(what);
    ReferenceBackend ref;
    const StepResult want = training_step(ref, g, training);
    const StepResult got = training_step(gpu, g, training);
    expect_step_close(g, got, want, plain_float64_step(block, v, training), autocast_dtype(mode).value());
    testing::expect_measured_equals_predicted(gpu, g, training);
  });
}

// amp_float16 (with GradScaler's loss scaling) and amp_bfloat16 on residual blocks with batch norm
// (float32 weights under half activations) and group norm (float32 on CUDA: casts around it), in
// both layouts, training and inference.
TEST(GpuAmp, AutocastStepsMatchTheReference) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  CaseLog log;
  for (Precision mode : {Precision::amp_float16, Precision::amp_bfloat16})
    for (Layout layout : kLayouts)
      for (NormKind norm : {NormKind::batch, NormKind::group})
        for (bool training : {true, false})
          for (const char* kind : {"standard", "bottleneck", "separable"}) {
            BlockSpec block = testing::small_block(2, 4, 8, 8);
            block.norm = norm;
            block.norm_groups = 2;
            block.residual = true;
            block.layout = layout;
            block.mode = training ? RunMode::train : RunMode::infer;
            block.precision.precision = mode;
            expect_amp_step_matches(gpu, block, testing::variant(kind), log,
                                    norm == NormKind::batch ? "batch norm" : "group norm");
          }
  log.report();
}

// Every AMP variant of configs/ (seed 004's ResNet-50 under amp_float16), shrunk to test size.
TEST(GpuAmp, ShippedAmpConfigsMatchTheReference) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  CaseLog log;
  int checked = 0;
  for (const std::string& file : config_files())
    for (const BlockSpec& original : load_spec_file(file).blocks)
      for (const VariantSpec& v : original.variants) {
        if (precision_of(original, v).precision == Precision::plain) continue;
        expect_amp_step_matches(gpu, shrunk(original), v, log,
                                std::filesystem::path(file).filename().string() + " " + original.name);
        ++checked;
      }
  EXPECT_GT(checked, 0);
  log.report();
}

// GradScaler's unscale_: every gradient times the inverse scale, the found-inf flag raised by an
// inf or a NaN in any of them and read back once, and cleared for the next step; scale() rounds
// a float16 gradient as the host backends do.
TEST(GpuAmp, LossScalingFindsNonFiniteGradientsAndRoundsAsTheHostDoes) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  ReferenceBackend ref;
  auto tensor = [](Backend& b, int64_t n, DType dtype) {
    return make_tensor(b.allocator(), TensorDesc{{n}, dtype, Layout::channels_first}, MemoryCategory::gradients);
  };
  Tensor a = tensor(gpu, 1000, DType::float32), b = tensor(gpu, 3, DType::float32);
  Tensor flags = tensor(gpu, kLossScalerStepBytes, DType::uint8);
  Values av(1000), bv = {1.0, -2.0, 3.0};
  for (size_t i = 0; i < av.size(); ++i) av[i] = 0.5 * static_cast<double>(i) - 100.0;
  upload(gpu, a, av);
  upload(gpu, b, bv);
  EXPECT_TRUE(gpu.unscale({&a, &b}, 0.25, flags));
  Values want = av;
  for (double& x : want) x *= 0.25;
  EXPECT_EQ(download(gpu, a), want);
  EXPECT_EQ(download(gpu, b), (Values{0.25, -0.5, 0.75}));
  for (double bad : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    bv[1] = bad;
    upload(gpu, b, bv);
    EXPECT_FALSE(gpu.unscale({&a, &b}, 0.5, flags)) << bad;
  }
  bv[1] = 2.0;
  upload(gpu, b, bv);
  EXPECT_TRUE(gpu.unscale({&a, &b}, 1.0, flags));

  Values g(4097);
  for (size_t i = 0; i < g.size(); ++i) g[i] = std::sin(0.01 * static_cast<double>(i)) * 1e-3;
  Tensor gh = tensor(gpu, 4097, DType::float16), gh_out = tensor(gpu, 4097, DType::float16);
  Tensor rh = tensor(ref, 4097, DType::float16), rh_out = tensor(ref, 4097, DType::float16);
  upload(gpu, gh, g);
  upload(ref, rh, g);
  gpu.scale(gh_out, gh, 65536.0);
  ref.scale(rh_out, rh, 65536.0);
  EXPECT_EQ(download(gpu, gh_out), download(ref, rh_out));
}

// ---- memory: measured equals predicted; out of memory is a status -------------------------------

TEST(GpuMemory, AllocatorPeakEqualsTheMemoryModel) {
  REQUIRE_CUDA_DEVICE();
  CaseLog log;
  for (cuda::CudnnAlgoMode mode : {cuda::CudnnAlgoMode::heuristic, cuda::CudnnAlgoMode::find}) {
    CudaBackendOptions options;
    options.cudnn_algo = mode;
    CudaBackend gpu(options);
    for (const std::string& file : config_files()) {
      const Spec spec = load_spec_file(file);
      for (const BlockSpec& original : spec.blocks)
        for (bool training : {true, false}) {
          BlockSpec block = shrunk(original);
          block.mode = training ? RunMode::train : RunMode::infer;
          block.autocast_device = AutocastDevice::cuda;  // AMP variants as compare --device cuda builds them
          for (const VariantSpec& v : block.variants) {
            const std::string what = std::filesystem::path(file).filename().string() + " " + block.name + " " + v.name +
                                     (training ? " train " : " infer ") + std::string(to_string(mode));
            log.run(what, [&] {
              SCOPED_TRACE(what);
              testing::expect_measured_equals_predicted(gpu, build_variant_graph(block, v), training);
            });
          }
        }
    }
  }
  log.report();
}

TEST(GpuMemory, CachedBlocksAreReusedAndReleased) {
  REQUIRE_CUDA_DEVICE();
  cuda::CudaCachingAllocator a;
  void* p = a.allocate(1000, MemoryCategory::temporaries);
  EXPECT_EQ(a.stats().reserved, 1024);
  a.deallocate(p, 1000, MemoryCategory::temporaries);
  void* q = a.allocate(1001, MemoryCategory::temporaries);  // same 1024-byte class: no cudaMalloc
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.stats().system_allocations, 1);
  void* r = a.allocate(2000, MemoryCategory::temporaries);
  EXPECT_EQ(a.stats().reserved, 1024 + 2048);
  a.deallocate(q, 1001, MemoryCategory::temporaries);
  a.deallocate(r, 2000, MemoryCategory::temporaries);
  EXPECT_EQ(a.cached_blocks(), 2);
  a.release_cached();
  EXPECT_EQ(a.stats().reserved, 0);
  EXPECT_EQ(a.stats().current, 0);
}

TEST(GpuMemory, DeviceOutOfMemoryThrowsOutOfMemoryAndLeavesTheAllocatorUsable) {
  REQUIRE_CUDA_DEVICE();
  const nlohmann::json info = cuda::device_info();
  const int64_t total = info.at("memory_bytes").get<int64_t>();
  cuda::CudaCachingAllocator a;
  void* small = a.allocate(4096, MemoryCategory::temporaries);
  a.deallocate(small, 4096, MemoryCategory::temporaries);
  try {
    a.allocate(2 * total, MemoryCategory::temporaries);
    FAIL() << "allocated twice the device's memory";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), 2 * total);
    EXPECT_NE(std::string(e.what()).find("cudaMalloc"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.cached_blocks(), 0) << "the cache is released before the retry";
  EXPECT_EQ(a.stats().current, 0);
  void* again = a.allocate(4096, MemoryCategory::temporaries);  // the error did not stick
  a.deallocate(again, 4096, MemoryCategory::temporaries);
}

TEST(GpuMemory, AVariantBeyondTheMemoryLimitGetsStatusOom) {
  REQUIRE_CUDA_DEVICE();
  CudaBackendOptions options;
  options.memory_limit_bytes = 1 << 20;
  CudaBackend gpu(options);
  BlockSpec block = testing::small_block(2, 16, 32, 64);  // input alone is 2 x 16 x 64 x 64 x 4 = 512 KiB
  const Graph g = build_variant_graph(block, testing::variant("standard"));
  ResultRow row;
  RunOptions run;
  run.time = false;
  run_variant(g, true, gpu, run, row);
  EXPECT_EQ(row.status, RunStatus::oom) << row.message;
  EXPECT_NE(row.message.find("limit"), std::string::npos) << row.message;
  EXPECT_FALSE(row.measured.has_value());
  EXPECT_EQ(gpu.allocator().stats().current, 0);
}

// ---- sizes the backend cannot take --------------------------------------------------------------

// A block past cuDNN's and the kernels' 32-bit counts beside an ordinary one: the prediction (the
// cuDNN workspace query) and the run leave it out with the reason, and the ordinary rows run.
TEST(GpuSizeLimits, AnImpossibleBlockIsUnsupportedAndTheOrdinaryOnesRun) {
  REQUIRE_CUDA_DEVICE();
  const Spec spec = load_spec_file(std::string(CONVBENCH_SOURCE_DIR) + "/tests/data/specs/impossible-sizes.yaml");
  const ResultSet predicted = analyze(spec, "cuda");
  ASSERT_EQ(predicted.rows.size(), 3u);
  CompareOptions options;
  options.device = "cuda";
  options.run.time = false;
  options.quiet = true;
  std::ostringstream notices;
  const ResultSet measured = compare(spec, options, notices);
  ASSERT_EQ(measured.rows.size(), 3u);
  for (const ResultRow& row : measured.rows) {
    if (row.block == "ordinary") {
      EXPECT_EQ(row.status, RunStatus::ok) << row.variant << ": " << row.message;
      EXPECT_TRUE(row.measured.has_value()) << row.variant;
    } else {
      EXPECT_EQ(row.status, RunStatus::unsupported) << row.message;
      EXPECT_NE(row.message.find("1024x1x262144x262144"), std::string::npos) << row.message;
      EXPECT_NE(row.message.find("2^31-1"), std::string::npos) << row.message;
    }
  }
}

// ---- timing --------------------------------------------------------------------------------------

TEST(GpuTiming, EventTimerMeasuresQueuedWorkWithinTheWallTime) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  Tensor t = make_tensor(gpu.allocator(), TensorDesc{{1, 1, 8192, 8192}, DType::float32, Layout::channels_first},
                         MemoryCategory::temporaries);
  cuda::EventTimer timer(gpu.stream());
  gpu.synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  timer.start();
  for (int i = 0; i < 20; ++i) gpu.fill(t, i);  // 20 x 256 MiB written
  timer.stop();
  const double ms = timer.elapsed_ms();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(ms, 0.0);
  EXPECT_LE(ms, wall_ms);
  EXPECT_EQ(download(gpu, t)[0], 19.0);
  EXPECT_THROW(cuda::EventTimer(gpu.stream()).elapsed_ms(), std::logic_error);
}

TEST(GpuTiming, L2FlushLeavesTensorsAndStatisticsAlone) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  Tensor t = make_tensor(gpu.allocator(), TensorDesc{{1, 1, 64, 64}, DType::float32, Layout::channels_first},
                         MemoryCategory::temporaries);
  gpu.fill(t, 3.0);
  const MemoryStats before = gpu.allocator().stats();
  gpu.measurement().flush_device_cache();
  gpu.measurement().flush_device_cache();
  gpu.synchronize();
  EXPECT_EQ(gpu.allocator().stats().reserved, before.reserved);
  EXPECT_EQ(gpu.allocator().stats().peak, before.peak);
  for (double v : download(gpu, t)) ASSERT_EQ(v, 3.0);
}

// ---- CUDA graphs (--graph) and the SM clock ----------------------------------------------------

// Why a step of `g` on `gpu` (deterministic mode, algorithms already chosen) may differ from
// another run of it in the last bits: its ops without a deterministic kernel, and its convs for
// which cuDNN offered no deterministic algorithm. Empty: the two must be equal bit for bit.
std::vector<std::string> nondeterminism(const Graph& g, const CudaBackend& gpu) {
  std::vector<std::string> why;
  for (const Op& op : g.ops)
    if (auto reason = cuda::cuda_nondeterministic_reason(g, op, true)) why.push_back(*reason);
  const nlohmann::json details = gpu.op_details();
  for (const auto& [op, d] : details.items())
    for (const char* dir : {"forward", "backward_data", "backward_filter"})
      if (d.contains(dir) && !d.at(dir).at("deterministic").get<bool>())
        why.push_back("conv " + op + " " + dir + ": cuDNN offers no deterministic algorithm (ran " +
                      d.at(dir).at("algo").get<std::string>() + ")");
  return why;
}

// Replaying a recorded step writes exactly what the eager step wrote: with deterministic
// algorithms (CudaBackendOptions::deterministic) the same kernels see the same inputs, so every
// output and gradient must be equal bit for bit. Only a step through an op that has no
// deterministic kernel (named by nondeterminism(), printed) is held to 1e-5 relative instead: its
// atomic adds differ between any two runs by ~1e-6 of the result (seen on an H200: 1.5e-5 at
// most between two eager steps with a nondeterministic algorithm).
TEST(GpuGraphs, AReplayedStepWritesWhatTheEagerStepWrote) {
  REQUIRE_CUDA_DEVICE();
  CudaBackendOptions options;
  options.deterministic = true;
  CudaBackend gpu(options);
  CaseLog log;
  int exact = 0, within_tolerance = 0;
  for (const std::string& file : config_files()) {
    const Spec spec = load_spec_file(file);
    for (const BlockSpec& block : spec.blocks) {
      BlockSpec b = shrunk(block);
      b.mode = RunMode::train;
      for (const VariantSpec& v : b.variants) {
        const Graph g = build_variant_graph(b, v);
        bool supported = true;
        for (const Op& op : g.ops) supported = supported && !gpu.unsupported(g, op);
        if (!supported) continue;
        const std::string what = std::filesystem::path(file).filename().string() + " " + b.name + " / " + v.name +
                                 " input " + g.desc(g.input).shape_string() + " " + std::string(to_string(b.dtype)) +
                                 " " + std::string(to_string(b.layout));
        log.run(what, [&] {
          SCOPED_TRACE(what);
          Executor ex(g, gpu, true);
          ex.set_dropout_seed(77);
          ModelState s = ex.init_state(7);
          Tensor x = make_tensor(gpu.allocator(), g.desc(g.input), MemoryCategory::inputs);
          Tensor dy = make_tensor(gpu.allocator(), g.desc(g.output), MemoryCategory::inputs);
          fill_uniform(gpu, x, 11);
          fill_uniform(gpu, dy, 13);
          gpu.clear_op_details();
          Values eager_output;
          std::vector<Values> eager_grads;
          {
            Tensor y = ex.forward(s, x);
            ex.backward(s, dy);
            eager_output = download(gpu, y);
            for (const Tensor& grad : s.grads) eager_grads.push_back(download(gpu, grad));
          }
          const std::vector<std::string> loose = nondeterminism(g, gpu);
          for (const std::string& why : loose)
            std::printf("[          ] %s: 1e-5, not bit for bit: %s\n", what.c_str(), why.c_str());
          (loose.empty() ? exact : within_tolerance)++;
          const std::vector<double> floors = gradient_floors(g, eager_grads);
          auto expect_same = [&](const Values& got, const Values& want, double floor, const std::string& name) {
            if (loose.empty())
              EXPECT_TRUE(got == want) << name << ": not bit for bit, relative error "
                                       << relative_error(got, want, floor);
            else
              EXPECT_LE(relative_error(got, want, floor), 1e-5) << name;
          };
          Executor::clear_grads(s);
          Tensor y;
          std::unique_ptr<ReplayableWork> step = gpu.measurement().capture([&] {
            y = ex.forward(s, x);
            ex.backward(s, dy);
          });
          ASSERT_TRUE(step);
          for (int replay = 0; replay < 2; ++replay) {
            // Recording ran nothing: poison what the replay must write, then replay.
            gpu.fill(y, std::numeric_limits<double>::quiet_NaN());
            for (Tensor& grad : s.grads) gpu.fill(grad, std::numeric_limits<double>::quiet_NaN());
            step->replay();
            gpu.synchronize();
            const std::string r = ", replay " + std::to_string(replay);
            expect_same(download(gpu, y), eager_output, 0.0, "block output" + r);
            for (size_t i = 0; i < s.grads.size(); ++i)
              expect_same(download(gpu, s.grads[i]), eager_grads[i], floors[i], g.params[i].name + r);
          }
          Executor::clear_grads(s);
        });
      }
    }
  }
  std::printf("[          ] %d steps replayed bit for bit, %d within 1e-5 (an op without a deterministic kernel)\n",
              exact, within_tolerance);
  EXPECT_GT(exact, 0);
  log.report();
}

TEST(GpuGraphs, CompareTimesTheReplayNextToTheEagerStep) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  const Graph g = build_variant_graph(testing::small_block(2, 16, 32, 16), testing::variant("standard"));
  ResultRow row;
  RunOptions run;
  run.measure.min_time_s = 0;
  run.measure.min_samples = 5;
  run.measure.timeout_s = 2;
  run.graph = true;
  run_variant(g, true, gpu, run, row);
  ASSERT_EQ(row.status, RunStatus::ok) << row.message;
  EXPECT_TRUE(row.graph_message.empty()) << row.graph_message;
  ASSERT_TRUE(row.graph.has_value());
  ASSERT_TRUE(row.step.has_value());
  EXPECT_GT(row.graph->median, 0.0);
  EXPECT_GE(row.graph->samples(), 5);
}

TEST(GpuClock, NvmlReportsTheSmClock) {
  REQUIRE_CUDA_DEVICE();
  CudaBackend gpu;
  const nlohmann::json info = gpu.measurement().device_info();
  const auto now = gpu.measurement().clock();
  if (!now) GTEST_SKIP() << "no SM clock: " << info.at("sm_clock_monitor").get<std::string>();
  EXPECT_EQ(info.at("sm_clock_monitor"), "nvml");
  EXPECT_EQ(now->domain, "sm");
  EXPECT_GT(now->mhz, 0.0);
  EXPECT_LE(now->mhz, 1.05 * info.at("sm_clock_max_mhz").get<double>());
}

TEST(GpuDevice, InfoNamesTheGpuAndVersions) {
  REQUIRE_CUDA_DEVICE();
  const nlohmann::json info = cuda::device_info();
  EXPECT_FALSE(info.at("gpu").get<std::string>().empty());
  EXPECT_GT(info.at("multiprocessors").get<int>(), 0);
  EXPECT_GT(info.at("memory_bytes").get<int64_t>(), 0);
  EXPECT_NE(info.at("cudnn_runtime_version").get<std::string>(), "0.0.0");
}

}  // namespace
}  // namespace convbench

#else

TEST(GpuTests, NotBuilt) { GTEST_SKIP() << "convbench was built without the CUDA backend"; }

#endif

#include "backends/cuda/cuda_limits.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/conv_problem.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_event_timer.hpp"
#include "backends/cuda/cudnn_conv.hpp"
#include "runtime/host_io.hpp"

namespace convbench::cuda {
namespace {

constexpr int64_t kCopyBytes = int64_t{1} << 30;  // far past the L2 (50 MiB on an H100)
constexpr int64_t kRows = 64, kSide = 8;          // M = 64 x 8 x 8 = 4096 positions
constexpr int64_t kChannels = 4096;               // K = N = 4096
constexpr int kRepetitions = 5;                   // the best one is the limit; one warm-up before

// Best of kRepetitions timed runs of `work` on the stream, after one untimed run, in ms.
double best_ms(CUstream_st* stream, const std::function<void()>& work) {
  work();
  double best = 0;
  for (int rep = 0; rep < kRepetitions; ++rep) {
    EventTimer timer(stream);
    timer.start();
    work();
    timer.stop();
    const double ms = timer.elapsed_ms();
    if (ms > 0 && (best == 0 || ms < best)) best = ms;
  }
  return best;
}

// Uniform values in [-1, 1): non-zero operands keep the tensor cores as busy (and the clocks as
// low) as a real convolution's.
std::vector<double> random_values(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

double copy_bandwidth(CudaBackend& backend) {
  const TensorDesc bytes{{kCopyBytes}, DType::uint8, Layout::channels_first};
  Tensor src = make_tensor(backend.allocator(), bytes, MemoryCategory::temporaries);
  Tensor dst = make_tensor(backend.allocator(), bytes, MemoryCategory::temporaries);
  CONVBENCH_CUDA_CHECK(cudaMemsetAsync(src.raw(), 0x5a, static_cast<size_t>(kCopyBytes), backend.stream()));
  const double ms = best_ms(backend.stream(), [&] {
    CONVBENCH_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.raw(), static_cast<size_t>(kCopyBytes),
                                         cudaMemcpyDeviceToDevice, backend.stream()));
  });
  return ms > 0 ? 2.0 * static_cast<double>(kCopyBytes) / (ms * 1e-3) : 0.0;
}

// The 1x1 convolution that is an M x K x N matrix product: (M/64 x 64 positions) x K channels in,
// N channels out.
ConvProblem gemm_problem(DType dtype) {
  ConvProblem p;
  p.x = TensorDesc{{kRows, kChannels, kSide, kSide}, dtype, Layout::channels_first};
  p.w = TensorDesc{{kChannels, kChannels, 1, 1}, dtype, Layout::channels_first};
  p.y = p.x;
  p.y_op = p.y;
  p.y_extra = {0, 0};
  p.padding = {0, 0};
  p.stride = {1, 1};
  p.dilation = {1, 1};
  return p;
}

double gemm_flops(CudaBackend& backend, CudnnConv& conv, const ConvProblem& p) {
  Tensor x = make_tensor(backend.allocator(), p.x, MemoryCategory::temporaries);
  Tensor w = make_tensor(backend.allocator(), p.w, MemoryCategory::temporaries);
  Tensor y = make_tensor(backend.allocator(), p.y, MemoryCategory::temporaries);
  upload(backend, x, random_values(p.x.numel(), 1));
  upload(backend, w, random_values(p.w.numel(), 2));
  const int64_t ws_bytes = conv.choose(p, ConvDirection::forward).workspace_bytes;
  Tensor ws;
  if (ws_bytes > 0)
    ws = make_tensor(backend.allocator(), TensorDesc{{ws_bytes}, DType::uint8, Layout::channels_first},
                     MemoryCategory::workspace);
  const double ms =
      best_ms(backend.stream(), [&] { conv.forward(p, x.raw(), w.raw(), y.raw(), ws_bytes > 0 ? ws.raw() : nullptr); });
  const double flops = 2.0 * static_cast<double>(kRows * kSide * kSide) * kChannels * kChannels;
  return ms > 0 ? flops / (ms * 1e-3) : 0.0;
}

}  // namespace

MeasuredLimits measure_cuda_limits(CudaBackend& backend, CudnnConv& conv, DType dtype) {
  MeasuredLimits m;
  m.bandwidth_bytes_per_s = copy_bandwidth(backend);
  const ConvProblem p = gemm_problem(dtype);
  m.peak_flops = gemm_flops(backend, conv, p);
  backend.synchronize();
  // The buffers are free again; hand their memory back so the next row's reserved bytes do not
  // include them.
  backend.allocator().release_cached();
  const ConvAlgoChoice& algo = conv.choose(p, ConvDirection::forward);
  m.method = "a 1 GiB device-to-device copy and a cuDNN 1x1 convolution of " + std::string(to_string(dtype)) +
             " (a 4096^3 matrix product, " + algo_name(ConvDirection::forward, algo.algo) + ", " +
             std::string(math_name(algo.math)) + "), best of " + std::to_string(kRepetitions);
  return m;
}

}  // namespace convbench::cuda

#include "backends/cuda/cuda_graph.hpp"

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_check.hpp"

namespace convbench::cuda {
namespace {

class CudaGraphReplay final : public ReplayableWork {
 public:
  CudaGraphReplay(cudaGraphExec_t exec, cudaStream_t stream) : exec_(exec), stream_(stream) {}
  ~CudaGraphReplay() override { cudaGraphExecDestroy(exec_); }
  CudaGraphReplay(const CudaGraphReplay&) = delete;
  CudaGraphReplay& operator=(const CudaGraphReplay&) = delete;

  void replay() override { CONVBENCH_CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

// Ends a capture that `work` abandoned by throwing, so the stream can be used again.
void abandon_capture(cudaStream_t stream) {
  cudaGraph_t partial = nullptr;
  cudaStreamEndCapture(stream, &partial);
  if (partial) cudaGraphDestroy(partial);
  (void)cudaGetLastError();  // the capture's failure is not sticky; do not leave it for the next check
}

}  // namespace

std::unique_ptr<ReplayableWork> capture_cuda_graph(CUstream_st* stream, const std::function<void()>& work) {
  // Nothing earlier may still be queued: a capture records only what is launched during it.
  CONVBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  CONVBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    work();
  } catch (...) {
    abandon_capture(stream);
    throw;
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (ended != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    CONVBENCH_CUDA_CHECK(ended);
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);  // the executable graph is independent of its template
  CONVBENCH_CUDA_CHECK(instantiated);
  auto replay = std::make_unique<CudaGraphReplay>(exec, stream);
  // Upload now so that the first replay does not pay for it (warm-up would absorb it anyway).
  CONVBENCH_CUDA_CHECK(cudaGraphUpload(exec, stream));
  return replay;
}

}  // namespace convbench::cuda

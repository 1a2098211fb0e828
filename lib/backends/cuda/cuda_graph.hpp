// Whole-step replay with CUDA graphs (`compare --graph`): the work a function queues on a stream
// is recorded by stream capture, instantiated once, and launched as one graph, so the kernels run
// back to back without the host walking the op graph between them.
#pragma once

#include <functional>
#include <memory>

#include "runtime/backend.hpp"

struct CUstream_st;

namespace convbench::cuda {

// Records what `work` queues on `stream` (nothing runs while recording) and instantiates it.
// Capture is thread-local: a call that is not allowed while capturing (cudaMalloc, a
// synchronisation) fails, and the capture with it, instead of running outside the graph. Throws
// std::runtime_error with file:line when capture or instantiation fails; the stream is left
// usable.
std::unique_ptr<ReplayableWork> capture_cuda_graph(CUstream_st* stream, const std::function<void()>& work);

}  // namespace convbench::cuda

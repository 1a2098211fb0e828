// The GPU's limits for one dtype, measured in about a second on the backend's own stream and
// through its own cuDNN path, so that an op's floor is drawn against what this process reaches on
// this GPU (its clocks, its power limit, its MIG slice), next to the datasheet's numbers:
//  - bandwidth: a 1 GiB device-to-device copy (cudaMemcpyAsync), read + write counted;
//  - compute: a 1x1 convolution that is a 4096 x 4096 x 4096 matrix product (M = 64 x 8 x 8
//    positions, K = N = 4096 channels), run by CudnnConv with the math the dtype is allowed (FMA
//    only for float32, TF32 for tf32, tensor ops for float16 / bfloat16), on random operands (a
//    GPU draws less power, and clocks higher, on zeros).
// Each is the best of five after a warm-up, timed by CUDA events.
#pragma once

#include "graph/dtype.hpp"
#include "runtime/device_measurement.hpp"

namespace convbench::cuda {

class CudaBackend;
class CudnnConv;

// Allocates about 2.2 GiB through the backend's allocator for the duration of the call (as
// temporaries), frees it and releases the allocator's cache before returning, so that rows
// measured afterwards see none of it. Throws on a CUDA or cuDNN error (or when the memory does
// not fit under --memory-limit).
MeasuredLimits measure_cuda_limits(CudaBackend& backend, CudnnConv& conv, DType dtype);

}  // namespace convbench::cuda

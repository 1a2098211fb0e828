// Internal to the cpu backend: the sizes oneDNN cannot be handed, checked before any primitive is
// created (CpuBackend::limitation(), so that a variant past them gets status `unsupported` and
// the memory prediction never asks oneDNN for its workspace).
//
// oneDNN 2.6's x64 convolution kernels describe a problem in `int` fields (jit_conv_conf_t: the
// sizes, and products of them such as the spatial size ih * iw), and its blocked layouts pad the
// channels to blocks of 16. Sizes past 2^31 overflow them. Bisected on a 2-D 1x1 convolution of
// one channel: creating the primitive descriptor died with SIGFPE (the whole process gone) for
// every N x H x W that was a multiple of 2^35 (1 x 131072 x 262144, 2 x 131072 x 131072, the
// issue's 1 x 262144 x 262144), and passed for 2^34 or 3 x 2^34, whose fields had overflowed all
// the same. oneDNN 3.7 refuses such shapes itself ("src size > INT_MAX is not supported",
// uxlfoundation/oneDNN PRs #2387 and #2627); 2.6 does not, so convbench refuses them first, well
// below the first crash: every tensor a oneDNN primitive reads or writes must stay within
// 2^31 - 1 bytes, counted with the channels padded to the 16-channel blocks its convolutions may
// choose (the largest such conv creates its primitives: tests/cpu_backend_test.cpp). The
// backend's own loops (elementwise, pooling, group norm, channels-first batch norm, 3-D depthwise
// convolution) index with 64-bit integers and have no such limit.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "graph/graph.hpp"

namespace convbench::cpu {

inline constexpr int64_t kOneDnnMaxTensorBytes = std::numeric_limits<int>::max();
// The widest channel block of oneDNN 2.6's x64 convolution layouts (nChw16c, OIhw16i16o).
inline constexpr int64_t kOneDnnChannelBlock = 16;

// Why oneDNN cannot run `op` at its size (naming the tensor, its size and the limit), or nullopt:
// also nullopt for ops the cpu backend computes in its own loops.
std::optional<std::string> onednn_size_limitation(const Graph& graph, const Op& op);

}  // namespace convbench::cpu

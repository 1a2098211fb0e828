// A training batch norm's statistics from its input's per-channel sum and sum of squares
// (--conv-fusion conv_bn_stats: the conv before it wrote them, lib/backends/conv_fusion.hpp),
// written once for the GPU (kernels/batch_norm.cu) and the host (the tests' fusing backend), so
// the arithmetic is checked on every machine.
//
// The unfused batch norm merges Welford accumulators; the sums lose more to rounding where a
// channel's mean is large against its spread (the variance is a difference of two large
// numbers), as cuDNN's fused statistics do. In double from here on, and a variance that
// rounding made negative is taken as zero.
#pragma once

#if defined(__CUDACC__)
#define CONVBENCH_BN_HD __host__ __device__ __forceinline__
#else
#define CONVBENCH_BN_HD inline
#endif

namespace convbench::kernels {

struct ChannelMoments {
  double mean = 0.0;
  double biased_var = 0.0;    // what the batch is normalised with
  double unbiased_var = 0.0;  // what the running variance is updated with
};

// `count`: the values per channel (batch times spatial size), at least 2.
CONVBENCH_BN_HD ChannelMoments moments_from_sums(double sum, double sqsum, double count) {
  ChannelMoments m;
  m.mean = sum / count;
  const double var = sqsum / count - m.mean * m.mean;
  m.biased_var = var > 0.0 ? var : 0.0;
  m.unbiased_var = m.biased_var * count / (count - 1.0);
  return m;
}

}  // namespace convbench::kernels

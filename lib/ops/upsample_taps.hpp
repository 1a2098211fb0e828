// Which input positions an upsampled output position reads: the one rule the reference backend
// (in double), the cpu backend (in float) and the CUDA kernels (in float, on the device) all
// compute, so that they cannot drift apart. Header-only and usable in kernels/.
#pragma once

#include <cstddef>
#include <vector>

#if defined(__CUDACC__)
#define CONVBENCH_UPSAMPLE_HD __host__ __device__ __forceinline__
#else
#define CONVBENCH_UPSAMPLE_HD inline
#endif

namespace convbench {

// Nearest neighbour by an integer scale: output position (od, oh, ow) reads input position
// (od, oh, ow) / scale, flat in an input of height in_h and width in_w (PyTorch's nearest mode for
// integer scale factors; a 2-D tensor's padded depth is 1 on both sides: 0 / scale = 0).
template <class Index>
CONVBENCH_UPSAMPLE_HD Index upsample_nearest_source(Index od, Index oh, Index ow, Index in_h, Index in_w, Index scale) {
  return ((od / scale) * in_h + oh / scale) * in_w + ow / scale;
}

// Linear (bilinear, trilinear) along one dim: output position o reads input positions i0 and i1
// with weights w0 and w1.
template <class Real, class Index>
struct UpsampleTap {
  Index i0, i1;
  Real w0, w1;
};

// PyTorch's area_pixel_compute_scale and area_pixel_compute_source_index (not cubic), in Real.
// Without align_corners the scale is in / out: PyTorch uses 1 / scale_factor when given one,
// which for an integer scale (out = in * scale) is the same number.
template <class Real, class Index>
CONVBENCH_UPSAMPLE_HD UpsampleTap<Real, Index> upsample_linear_tap(Index in, Index out, Index o, bool align_corners) {
  const Real scale = align_corners ? (out > 1 ? static_cast<Real>(in - 1) / static_cast<Real>(out - 1) : Real(0))
                                   : static_cast<Real>(in) / static_cast<Real>(out);
  Real src = align_corners ? scale * static_cast<Real>(o) : scale * (static_cast<Real>(o) + Real(0.5)) - Real(0.5);
  if (src < Real(0)) src = Real(0);
  const Index i0 = static_cast<Index>(src);
  const Real w1 = src - static_cast<Real>(i0);
  return {i0, i0 < in - 1 ? i0 + 1 : i0, Real(1) - w1, w1};
}

// Every output position's taps along one dim, for the host backends, which compute them once per
// call (the CUDA kernels compute each thread's own).
template <class Real, class Index>
std::vector<UpsampleTap<Real, Index>> upsample_linear_taps(Index in, Index out, bool align_corners) {
  std::vector<UpsampleTap<Real, Index>> taps(static_cast<std::size_t>(out));
  for (Index o = 0; o < out; ++o)
    taps[static_cast<std::size_t>(o)] = upsample_linear_tap<Real>(in, out, o, align_corners);
  return taps;
}

}  // namespace convbench

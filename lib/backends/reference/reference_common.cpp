// Helpers shared by the reference kernels: logical-order loads and stores, padded 3-D geometry.
#include <algorithm>
#include <stdexcept>

#include "backends/reference/reference_kernels.hpp"
#include "runtime/host_io.hpp"

namespace convbench::reference {
namespace {

// Calls f(logical, physical) for every element of `desc`. This is physical_offset() from
// host_io.hpp unrolled for whole tensors, which avoids rebuilding the stride vector per element:
// channels_last keeps (N, spatial..., C) in memory, so logical (n, c, s) sits at (n*S + s)*C + c.
template <class F>
void for_each_element(const TensorDesc& desc, F f) {
  if (desc.layout == Layout::channels_first || desc.rank() < 3) {
    const int64_t count = desc.numel();
    for (int64_t i = 0; i < count; ++i) f(i, i);
    return;
  }
  const int64_t batch = desc.batch(), channels = desc.channels(), spatial = desc.spatial_size();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t s = 0; s < spatial; ++s) f((n * channels + c) * spatial + s, (n * spatial + s) * channels + c);
}

}  // namespace

std::vector<double> load(const Tensor& t) {
  if (!t.defined()) throw std::invalid_argument("reference backend: load from an unallocated tensor");
  std::vector<double> values(static_cast<size_t>(t.desc.numel()));
  const void* base = t.raw();
  const DType dtype = t.desc.dtype;
  for_each_element(t.desc, [&](int64_t logical, int64_t physical) {
    values[static_cast<size_t>(logical)] = load_element(base, physical, dtype);
  });
  return values;
}

void store(Tensor& t, const std::vector<double>& values) {
  if (!t.defined()) throw std::invalid_argument("reference backend: store into an unallocated tensor");
  if (static_cast<int64_t>(values.size()) != t.desc.numel())
    throw std::invalid_argument("reference backend: storing " + std::to_string(values.size()) +
                                " values into a tensor of shape " + t.desc.shape_string());
  void* base = t.raw();
  const DType dtype = t.desc.dtype;
  for_each_element(t.desc, [&](int64_t logical, int64_t physical) {
    store_element(base, physical, dtype, values[static_cast<size_t>(logical)]);
  });
}

Extent3 spatial_extent(const TensorDesc& desc) {
  const int dims = desc.spatial_rank();
  if (dims != 2 && dims != 3)
    throw std::invalid_argument("reference backend: tensors need 2 or 3 spatial dims, got shape " +
                                desc.shape_string());
  Extent3 e{1, 1, 1};
  for (int d = 0; d < dims; ++d) e[static_cast<size_t>(3 - dims + d)] = desc.shape[static_cast<size_t>(2 + d)];
  return e;
}

Extent3 per_dim(const std::vector<int64_t>& values, int64_t fill) {
  Extent3 e{fill, fill, fill};
  const size_t dims = values.size();
  if (dims > 3) throw std::invalid_argument("reference backend: more than 3 spatial dims");
  for (size_t d = 0; d < dims; ++d) e[3 - dims + d] = values[d];
  return e;
}

int64_t volume(const Extent3& e) { return e[0] * e[1] * e[2]; }

Extent3 unflatten(int64_t flat, const Extent3& e) { return {flat / (e[1] * e[2]), flat / e[2] % e[1], flat % e[2]}; }

TapRange valid_tap_range(int64_t strided_extent, int64_t dense_extent, int64_t stride, int64_t offset) {
  // p*stride + offset >= 0  <=>  p >= ceil(-offset / stride)
  const int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // p*stride + offset <= dense_extent - 1  <=>  p <= floor((dense_extent - 1 - offset) / stride)
  const int64_t room = dense_extent - 1 - offset;
  const int64_t last = room < 0 ? 0 : std::min(strided_extent, room / stride + 1);
  return {first, std::max(first, last)};
}

void collect_taps(TapFrom from, const Window& window, const Extent3& at, const Extent3& source_extent,
                  std::vector<WindowTap>& taps) {
  taps.clear();
  // The source coordinate of kernel position k along dim d, or -1 when the tap falls in the
  // padding (or, from the dense side, between strides).
  auto source = [&](size_t d, int64_t k) -> int64_t {
    const int64_t offset = k * window.dilation[d] - window.padding[d];
    int64_t s;
    if (from == TapFrom::strided) {
      s = at[d] * window.stride[d] + offset;
    } else {
      const int64_t t = at[d] - offset;  // = s * stride
      if (t < 0 || t % window.stride[d] != 0) return -1;
      s = t / window.stride[d];
    }
    return s >= 0 && s < source_extent[d] ? s : -1;
  };
  const Extent3& k = window.kernel;
  for (int64_t k0 = 0; k0 < k[0]; ++k0) {
    const int64_t s0 = source(0, k0);
    if (s0 < 0) continue;
    for (int64_t k1 = 0; k1 < k[1]; ++k1) {
      const int64_t s1 = source(1, k1);
      if (s1 < 0) continue;
      for (int64_t k2 = 0; k2 < k[2]; ++k2) {
        const int64_t s2 = source(2, k2);
        if (s2 < 0) continue;
        taps.push_back({(k0 * k[1] + k1) * k[2] + k2, (s0 * source_extent[1] + s1) * source_extent[2] + s2});
      }
    }
  }
}

}  // namespace convbench::reference

#include "backends/host_backend.hpp"

#include <cmath>
#include <cstring>

#include "runtime/host_io.hpp"

namespace convbench {

void HostBackend::copy_from_host(Tensor& dst, const void* src) {
  std::memcpy(dst.raw(), src, static_cast<size_t>(dst.desc.bytes()));
}

void HostBackend::copy_to_host(const Tensor& src, void* dst) {
  std::memcpy(dst, src.raw(), static_cast<size_t>(src.desc.bytes()));
}

// Element by element in storage order (the same desc: the same layout on both sides), each value
// rounded to the tensor's dtype as a device's multiply would round it.
void HostBackend::scale(Tensor& out, const Tensor& in, double factor) {
  const int64_t n = in.desc.numel();
  for (int64_t i = 0; i < n; ++i)
    store_element(out.raw(), i, out.desc.dtype, load_element(in.raw(), i, in.desc.dtype) * factor);
}

bool HostBackend::unscale(const std::vector<Tensor*>& grads, double factor, Tensor& flags) {
  bool finite = true;
  for (Tensor* t : grads) {
    const int64_t n = t->desc.numel();
    for (int64_t i = 0; i < n; ++i) {
      const double v = load_element(t->raw(), i, t->desc.dtype);
      finite = finite && std::isfinite(v);
      store_element(t->raw(), i, t->desc.dtype, v * factor);
    }
  }
  store_element(flags.raw(), 0, DType::float32, factor);
  store_element(flags.raw(), 1, DType::float32, finite ? 0.0 : 1.0);
  return finite;
}

}  // namespace convbench

#include "backends/host_backend.hpp"

#include <cstring>

namespace convbench {

void HostBackend::copy_from_host(Tensor& dst, const void* src) {
  std::memcpy(dst.raw(), src, static_cast<size_t>(dst.desc.bytes()));
}

void HostBackend::copy_to_host(const Tensor& src, void* dst) {
  std::memcpy(dst, src.raw(), static_cast<size_t>(src.desc.bytes()));
}

}  // namespace convbench

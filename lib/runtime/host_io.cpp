#include "runtime/host_io.hpp"

#include <cstring>

#include "runtime/backend.hpp"
#include "runtime/half_float.hpp"

namespace convbench {

void store_element(void* base, int64_t i, DType dtype, double value) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: static_cast<float*>(base)[i] = static_cast<float>(value); return;
    case DType::float64: static_cast<double*>(base)[i] = value; return;
    case DType::float16: static_cast<uint16_t*>(base)[i] = float_to_half(static_cast<float>(value)); return;
    case DType::bfloat16: static_cast<uint16_t*>(base)[i] = float_to_bf16(static_cast<float>(value)); return;
    case DType::uint8: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(value); return;
    case DType::int64: static_cast<int64_t*>(base)[i] = static_cast<int64_t>(value); return;
  }
}

double load_element(const void* base, int64_t i, DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: return static_cast<const float*>(base)[i];
    case DType::float64: return static_cast<const double*>(base)[i];
    case DType::float16: return half_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::bfloat16: return bf16_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::uint8: return static_cast<const uint8_t*>(base)[i];
    case DType::int64: return static_cast<double>(static_cast<const int64_t*>(base)[i]);
  }
  return 0.0;
}

int64_t physical_offset(const TensorDesc& desc, int64_t logical) {
  if (desc.layout == Layout::channels_first || desc.rank() < 3) return logical;
  const std::vector<int64_t> strides = desc.strides();
  int64_t offset = 0;
  for (size_t d = desc.shape.size(); d-- > 0;) {
    offset += (logical % desc.shape[d]) * strides[d];
    logical /= desc.shape[d];
  }
  return offset;
}

void upload(Backend& backend, Tensor& t, const std::vector<double>& values) {
  const int64_t n = t.desc.numel();
  if (static_cast<int64_t>(values.size()) != n) throw std::invalid_argument("upload: size mismatch");
  std::vector<unsigned char> host(static_cast<size_t>(t.desc.bytes()));
  for (int64_t i = 0; i < n; ++i)
    store_element(host.data(), physical_offset(t.desc, i), t.desc.dtype, values[static_cast<size_t>(i)]);
  backend.copy_from_host(t, host.data());
}

std::vector<double> download(Backend& backend, const Tensor& t) {
  const int64_t n = t.desc.numel();
  std::vector<unsigned char> host(static_cast<size_t>(t.desc.bytes()));
  backend.copy_to_host(t, host.data());
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = load_element(host.data(), physical_offset(t.desc, i), t.desc.dtype);
  return out;
}

}  // namespace convbench

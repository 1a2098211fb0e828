#include "runtime/host_io.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "runtime/backend.hpp"

namespace convbench {
namespace {

uint16_t float_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return 0x7FC0;
  u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_half(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((u >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = u & 0x7FFFFFu;
  if (((u >> 23) & 0xFF) == 0xFF) return static_cast<uint16_t>(sign | 0x7C00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow to infinity
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(half);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

}  // namespace

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

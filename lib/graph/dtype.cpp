#include "graph/dtype.hpp"

#include <bit>
#include <cstdint>

namespace convbench {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::tf32: return "tf32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float64: return "float64";
    case DType::uint8: return "uint8";
    case DType::int64: return "int64";
  }
  return "?";
}

std::string_view to_string(Layout layout) {
  return layout == Layout::channels_first ? "channels_first" : "channels_last";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : {DType::float32, DType::tf32, DType::float16, DType::bfloat16})
    if (to_string(d) == name) return d;
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view name) {
  if (name == "channels_first") return Layout::channels_first;
  if (name == "channels_last") return Layout::channels_last;
  return std::nullopt;
}

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::plain: return "plain";
    case Precision::amp_float16: return "amp_float16";
    case Precision::amp_bfloat16: return "amp_bfloat16";
  }
  return "?";
}

std::string_view to_string(AutocastDevice device) { return device == AutocastDevice::cpu ? "cpu" : "cuda"; }

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = {"plain", "amp_float16", "amp_bfloat16"};
  return names;
}

std::optional<Precision> parse_precision(std::string_view name) {
  for (Precision p : {Precision::plain, Precision::amp_float16, Precision::amp_bfloat16})
    if (to_string(p) == name) return p;
  return std::nullopt;
}

std::optional<DType> autocast_dtype(Precision precision) {
  switch (precision) {
    case Precision::plain: return std::nullopt;
    case Precision::amp_float16: return DType::float16;
    case Precision::amp_bfloat16: return DType::bfloat16;
  }
  return std::nullopt;
}

DType stats_dtype(DType dtype) { return dtype == DType::float64 ? DType::float64 : DType::float32; }

int64_t element_bytes(DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: return 4;
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::float64:
    case DType::int64: return 8;
    case DType::uint8: return 1;
  }
  return 0;
}

float round_to_tf32(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7f800000u) == 0x7f800000u) return value;  // NaN and infinity as they are
  // Adding half of the last kept place (bit 12) to the magnitude and clearing the 13 dropped bits
  // rounds to nearest, ties away from zero; a carry into the exponent is the correct result.
  bits = (bits + 0x1000u) & 0xffffe000u;
  return std::bit_cast<float>(bits);
}

}  // namespace convbench

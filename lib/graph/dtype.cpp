#include "graph/dtype.hpp"

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

}  // namespace convbench

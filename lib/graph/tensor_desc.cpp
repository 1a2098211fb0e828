#include "graph/tensor_desc.hpp"

namespace convbench {

int64_t TensorDesc::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t TensorDesc::spatial_size() const {
  int64_t n = 1;
  for (int i = 2; i < rank(); ++i) n *= shape[static_cast<size_t>(i)];
  return n;
}

std::vector<int64_t> TensorDesc::strides() const {
  const size_t r = shape.size();
  std::vector<int64_t> s(r, 1);
  if (r < 3 || layout == Layout::channels_first) {
    for (size_t i = r; i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
  }
  // channels_last: memory order N, spatial..., C.
  s[1] = 1;
  int64_t acc = shape[1];
  for (size_t i = r; i-- > 2;) {
    s[i] = acc;
    acc *= shape[i];
  }
  s[0] = acc;
  return s;
}

std::string TensorDesc::shape_string() const {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(shape[i]);
  }
  return out;
}

}  // namespace convbench

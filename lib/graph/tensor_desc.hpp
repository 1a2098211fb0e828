// The static description of a tensor: logical shape N, C, spatial..., element type and layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/dtype.hpp"

namespace convbench {

// Shapes are always logical (N, C, D?, H, W) whatever the layout; the layout only decides the
// order in memory. Per-channel and flat tensors (BN statistics, dropout masks) use rank 1.
struct TensorDesc {
  std::vector<int64_t> shape;
  DType dtype = DType::float32;
  Layout layout = Layout::channels_first;

  int64_t numel() const;
  int64_t bytes() const { return numel() * element_bytes(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  int spatial_rank() const { return rank() - 2; }
  int64_t batch() const { return shape.at(0); }
  int64_t channels() const { return shape.at(1); }
  int64_t spatial_size() const;  // product of the spatial dims
  // Element strides of the logical dims for this layout (contiguous storage).
  std::vector<int64_t> strides() const;
  std::string shape_string() const;  // "6x16x32x32x32"
  bool operator==(const TensorDesc&) const = default;
};

}  // namespace convbench

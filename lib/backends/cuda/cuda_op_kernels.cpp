#include <limits>

#include "backends/cuda/cuda_op_kernels.hpp"

namespace convbench::cuda {

bool float_storage(DType d) {
  return d == DType::float32 || d == DType::tf32 || d == DType::float16 || d == DType::bfloat16;
}

kernels::Dims3 per_dim3(const std::vector<int64_t>& values, int fill) {
  kernels::Dims3 e;
  e.v[0] = e.v[1] = e.v[2] = fill;
  const size_t dims = values.size();
  if (dims > 3) throw std::invalid_argument("cuda backend: more than 3 spatial dims");
  for (size_t i = 0; i < dims; ++i) e.v[3 - dims + i] = static_cast<int>(values[i]);
  return e;
}

// Spatial sizes padded to three dims, 2-D tensors getting depth 1 (as the reference backend).
kernels::Dims3 spatial3(const TensorDesc& d) {
  const int dims = d.spatial_rank();
  if (dims != 2 && dims != 3)
    throw std::invalid_argument("cuda backend: tensors need 2 or 3 spatial dims, got " + d.shape_string());
  kernels::Dims3 e;
  e.v[0] = e.v[1] = e.v[2] = 1;
  for (int i = 0; i < dims; ++i) e.v[3 - dims + i] = static_cast<int>(d.shape[static_cast<size_t>(2 + i)]);
  return e;
}

int element_count(const TensorDesc& d) {
  if (d.numel() > kMaxElements)
    throw std::invalid_argument("cuda backend: tensor " + d.shape_string() + " has more than 2^31-1 elements");
  return static_cast<int>(d.numel());
}

kernels::ActShape act_shape(const TensorDesc& d) {
  element_count(d);
  return {static_cast<int>(d.batch()), static_cast<int>(d.channels()), static_cast<int>(d.spatial_size()),
          d.layout == Layout::channels_last && d.rank() >= 3};
}

kernels::PoolShape pool_shape(const TensorDesc& in, const TensorDesc& out, const PoolAttrs& a) {
  kernels::PoolShape s;
  s.n = static_cast<int>(in.batch());
  s.c = static_cast<int>(in.channels());
  s.in = spatial3(in);
  s.out = spatial3(out);
  s.kernel = per_dim3(a.kernel, 1);
  s.stride = per_dim3(a.stride, 1);
  s.padding = per_dim3(a.padding, 0);
  s.channels_last = in.layout == Layout::channels_last;
  return s;
}

kernels::UpsampleShape upsample_shape(const TensorDesc& in, const TensorDesc& out, const Op& op) {
  kernels::UpsampleShape s;
  s.n = static_cast<int>(in.batch());
  s.c = static_cast<int>(in.channels());
  s.in = spatial3(in);
  s.out = spatial3(out);
  s.scale = static_cast<int>(op.upsample_scale);
  s.channels_last = in.layout == Layout::channels_last;
  s.linear = op.upsample_linear;
  s.align_corners = op.align_corners;
  return s;
}

float* float_data(Tensor* t) { return t ? t->data<float>() : nullptr; }
const float* float_data(const Tensor* t) { return t ? t->data<float>() : nullptr; }
void* raw(Tensor* t) { return t ? t->raw() : nullptr; }

}  // namespace convbench::cuda

// Moving values between host vectors of doubles (logical N, C, spatial... order) and tensors of any
// dtype and layout, on any backend. Tests, initialisation and the reference backend use it.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/tensor.hpp"

namespace convbench {

class Backend;

// Converts one element between double and a storage dtype (round to nearest even for fp16/bf16).
void store_element(void* base, int64_t index, DType dtype, double value);
double load_element(const void* base, int64_t index, DType dtype);

// Offset in elements of the logical index `logical` (row-major over desc.shape) in memory.
int64_t physical_offset(const TensorDesc& desc, int64_t logical);

// Writes `values` (logical order, numel entries) into `t`.
void upload(Backend& backend, Tensor& t, const std::vector<double>& values);
// Reads `t` back in logical order.
std::vector<double> download(Backend& backend, const Tensor& t);

}  // namespace convbench

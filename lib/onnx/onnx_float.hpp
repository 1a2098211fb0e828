// ONNX stores a float attribute (LeakyRelu's alpha, an epsilon) as float32: 0.01 arrives as
// 0.009999999776. The number meant is the shortest decimal that rounds to that float, which is
// what a spec would say and what convbench's double attributes hold, so an exported block reads
// back as the same graph (same attributes, same graph hash).
#pragma once

#include <cstdio>
#include <cstdlib>

namespace convbench {

inline double onnx_float_value(float f) {
  char text[32];
  for (int digits = 1; digits <= 9; ++digits) {  // 9 significant digits always round-trip a float
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(f));
    const double d = std::strtod(text, nullptr);
    if (static_cast<float>(d) == f) return d;
  }
  return f;  // NaN: no decimal reads back as it
}

}  // namespace convbench

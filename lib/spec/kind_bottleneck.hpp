// bottleneck's parameters (VariantSpec::kind_parameters; kind_bottleneck.cpp reads and uses them).
#pragma once

#include <cstdint>

namespace convbench {

struct BottleneckParameters {
  int64_t ratio = 4;   // the middle width is out_channels / ratio
  int64_t groups = 1;  // of the middle conv
};

}  // namespace convbench

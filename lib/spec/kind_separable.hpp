// separable's parameters (VariantSpec::kind_parameters; kind_separable.cpp reads and uses them).
#pragma once

#include <cstdint>

namespace convbench {

struct SeparableParameters {
  int64_t multiplier = 1;  // the depthwise conv widens to in_channels x multiplier
};

}  // namespace convbench

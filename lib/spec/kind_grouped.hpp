// grouped's parameters (VariantSpec::kind_parameters; kind_grouped.cpp reads and uses them).
#pragma once

#include <cstdint>

namespace convbench {

struct GroupedParameters {
  int64_t groups = 1;  // required in a spec: `{kind: grouped, groups: N}`
};

}  // namespace convbench

// branches' parameters (VariantSpec::kind_parameters; kind_branches.cpp reads and uses them).
#pragma once

#include <cstdint>

namespace convbench {

struct BranchesParameters {
  int64_t count = 0;                // required in a spec
  bool split_channels = true;       // split: channels (each branch reads in_channels / count) or none
  int64_t branch_out_channels = 0;  // each branch's out_channels (default: the block's / count)
};

}  // namespace convbench

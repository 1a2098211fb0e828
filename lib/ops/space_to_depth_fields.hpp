// What space_to_depth and its inverse depth_to_space share (space_to_depth.cpp): the fields
// block_size (2) and order (channel_major, block_major) into SpaceToDepthAttrs, their resolved
// attributes, no work (a permutation moves bytes only) and no traits.
#pragma once

#include "ops/op_definition.hpp"

namespace convbench {

void set_block_permutation_fields(OpDefinition& d);

}  // namespace convbench

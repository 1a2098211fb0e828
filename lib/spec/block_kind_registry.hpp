// The registry of block kinds (block_kind.hpp): every kind's definition, found by name, in the
// order of spec/block_kinds.def. Each lib/spec/kind_<kind>.cpp defines its kind.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spec/block_kind.hpp"

namespace convbench {

// A parsed variant's kind always has a definition; asking for one that has none is a bug.
const BlockKindDefinition& block_kind(std::string_view name);
// nullptr for a name that is no block kind.
const BlockKindDefinition* find_block_kind(std::string_view name);
// In block_kinds.def order: the order messages list them in.
const std::vector<const BlockKindDefinition*>& block_kinds();
// Their names, all of them or those a network takes (BlockKindDefinition::not_in_networks).
std::vector<std::string> block_kind_names(bool in_networks = false);

// Whether the variant is another variant of its block, folded (BlockKindDefinition::folds_another).
bool folds_another(const VariantSpec& v);

// One function per block kind (block_kinds.def), defined in the kind's file, called once by the
// registry: BlockKindDefinition define_standard_kind(); ...
#define CONVBENCH_BLOCK_KIND(kind) BlockKindDefinition define_##kind##_kind();
#include "spec/block_kinds.def"
#undef CONVBENCH_BLOCK_KIND

}  // namespace convbench

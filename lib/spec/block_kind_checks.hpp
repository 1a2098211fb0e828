// Fit checks that several block kinds make of their parameters (BlockKindDefinition::fit).
#pragma once

#include <cstdint>
#include <string>

#include "spec/block_kind.hpp"

namespace convbench {

// A norm after a conv of `channels` outputs (`which` names the conv in the message): group norm
// needs them divisible by norm_groups. Fails at the variant.
void fit_norm_groups(const BlockSpec& block, const FitSite& at, int64_t channels, const std::string& which);

// The tensor (batch, channels, size...) must have no more elements than int64 counts. Fails at
// parameter `key`, which decides `channels`.
void fit_elements(const BlockSpec& block, const FitSite& at, const std::string& key, int64_t channels,
                  const std::string& which);

}  // namespace convbench

// A network's cost by stage: its ops grouped by the first component of their names (a network's
// op names start with the stage: "down2.block.convs.1.conv"), so a user sees which stage holds
// the parameters, does the work, keeps the activations and takes the time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "explain/explanation.hpp"

namespace convbench {

// Stages in the order their first op runs; each op counted in exactly one stage, so the stages
// add up to the variant's totals (params, MACs, FLOPs, saved bytes; times when every op has one).
std::vector<StageFacts> stage_breakdown(const std::vector<OpFacts>& ops, const std::optional<double>& headline_ms);

// The stage an op name belongs to: the text before its first '.', or the whole name.
std::string stage_of(const std::string& op_name);

}  // namespace convbench

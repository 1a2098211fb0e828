// `convbench advise`'s outputs: per user variant, a ranked table of the changes tried against it
// (time and peak, ratios to the variant as written, the outcome), then what to write for each
// change that buys something, with its evidence, and what was not tried and why. Text for a
// terminal, Markdown, and JSON with every figure (schema kAdviceSchema).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/advice.hpp"

namespace convbench {

inline constexpr const char* kAdviceSchema = "convbench.advice/1";

std::string advice_text(const Advice& advice);
std::string advice_markdown(const Advice& advice);
nlohmann::ordered_json advice_json(const Advice& advice);

}  // namespace convbench

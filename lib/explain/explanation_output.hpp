// An explanation as text for a terminal, Markdown, a self-contained HTML page, or JSON (every
// fact, and the sentences). All four show the same figures.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "explain/explanation.hpp"

namespace convbench {

inline constexpr const char* kExplanationSchema = "convbench.explanation/1";

std::string explanation_text(const Explanation& e);
std::string explanation_markdown(const Explanation& e);
std::string explanation_html(const Explanation& e);
nlohmann::json explanation_json(const Explanation& e);

// One line: the limits used and where they came from, or that they are unknown.
std::string limits_line(const Explanation& e);
// "warning: ..." when the limits are in doubt (measured on a busy machine); empty otherwise.
std::string limits_doubt_line(const Explanation& e);

}  // namespace convbench

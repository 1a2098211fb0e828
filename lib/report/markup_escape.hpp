// Escaping text for the markup formats convbench writes (HTML/SVG and LaTeX).
#pragma once

#include <string>

namespace convbench {

// & < > " ' as entities: safe in element content and in quoted attributes.
std::string html_escape(const std::string& text);
// LaTeX's special characters (\ & % $ # _ { } ~ ^) as commands that print them in text mode.
std::string latex_escape(const std::string& text);

}  // namespace convbench

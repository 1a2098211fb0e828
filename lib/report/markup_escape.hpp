// Escaping text that came from users (names in specs, anything in a results file) for every
// output convbench writes: the terminal and error messages, Markdown, CSV, LaTeX, HTML/SVG.
// Names may hold any UTF-8, so every function first makes control characters visible: an ESC
// must not reach the terminal, a newline must not break a table row or an error line, a NUL must
// not reach a file.
#pragma once

#include <string>

namespace convbench {

// Control characters (U+0000..U+001F, U+007F) and bytes that are not well-formed UTF-8 written as
// C escapes: \n, \t, \r, \xNN; one line, safe on a terminal. Other UTF-8 is kept.
std::string printable(const std::string& text);
// printable, then | as \| : one Markdown table cell.
std::string markdown_escape(const std::string& text);
// printable, then quoted (RFC 4180) when it holds a comma, a quote or leading/trailing space.
std::string csv_escape(const std::string& text);
// printable, then & < > " ' as entities: safe in element content and in quoted attributes.
std::string html_escape(const std::string& text);
// html_escape of each line, the line breaks kept (for multi-line notes in a <p>).
std::string html_escape_lines(const std::string& text);
// printable, then LaTeX's special characters (\ & % $ # _ { } ~ ^) as commands that print them
// in text mode.
std::string latex_escape(const std::string& text);

}  // namespace convbench

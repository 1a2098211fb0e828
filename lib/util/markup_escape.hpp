// Escaping text that came from users (names in specs, anything in a results file) for every
// output convbench writes: the terminal and error messages, Markdown, CSV, LaTeX, HTML/SVG.
// Names may hold any UTF-8, so every function first makes control characters visible: an ESC
// must not reach the terminal, a newline must not break a table row or an error line, a NUL must
// not reach a file.
#pragma once

#include <string>

namespace convbench {

// Control characters (U+0000..U+001F, U+007F) and bytes that are not well-formed UTF-8 written as
// C escapes: \n, \t, \r, \xNN; C1 controls (U+0080..U+009F), the line and paragraph separators
// (U+2028, U+2029) and the bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
// U+2066..U+2069: a name that shows its characters in another order than they are stored) as
// \uNNNN. One line, safe on a terminal, shown in the order it is stored. Other UTF-8 is kept.
std::string printable(const std::string& text);
// printable, then | as \| : one Markdown table cell.
std::string markdown_escape(const std::string& text);
// One CSV cell, for every CSV convbench writes (compare/report --csv, history export): printable;
// then a text cell that starts with = + - @ (or tab, carriage return) gets a leading ' so that no
// spreadsheet runs it as a formula (OWASP's CSV injection rule; a number such as -1.5e-05 is left
// as it is); then quoted (RFC 4180) when it holds a comma, a quote or leading/trailing space.
std::string csv_escape(const std::string& text);
// printable, then & < > " ' as entities: safe in element content and in quoted attributes.
std::string html_escape(const std::string& text);
// html_escape of each line, the line breaks kept (for multi-line notes in a <p>).
std::string html_escape_lines(const std::string& text);
// printable, then LaTeX's special characters (\ & % $ # _ { } ~ ^) as commands that print them
// in text mode.
std::string latex_escape(const std::string& text);

}  // namespace convbench

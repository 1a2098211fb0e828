// A plain table of strings rendered aligned for a terminal, as a Markdown table or as HTML.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace convbench {

// How a cell compares with its reference: better (faster, smaller) or worse. Shown as colour on
// a terminal that asked for it and as a CSS class in HTML; never in Markdown or plain text.
enum class Tone { plain, better, worse };

struct TextTable {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  // per column; numbers are right-aligned
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<Tone>> tones;  // optional, per row and cell (missing: plain)

  std::string render_terminal() const { return render_terminal(false); }
  // `colour`: ANSI green/red around toned cells (only for a terminal; alignment is kept).
  std::string render_terminal(bool colour) const;
  std::string render_markdown() const;
  // A <table> with escaped cells; toned cells get class "better" or "worse".
  std::string render_html() const;

  Tone tone(size_t row, size_t column) const;
};

// Number formatting shared by every human-readable format.
std::string format_fixed(double value, int decimals);
// The tone of a ratio against its reference, as printed to 2 decimals: 1.00 is plain, below
// better (faster, leaner), above worse.
Tone tone_of_ratio(double ratio);
std::string format_count(int64_t value);  // 13,920
std::string format_mib(int64_t bytes);    // 12.50 MiB
std::string format_ratio(double value);   // 0.57x
std::string format_bytes(int64_t bytes);  // 512 B, 12.0 KiB, 132.05 MiB, 1.25 GiB
std::string format_giga(int64_t value);   // 2.718 G
// `digits` significant digits without an exponent: 0.00123, 1.23, 123 (numbers >= 10^digits
// keep all their integer digits).
std::string format_significant(double value, int digits);

}  // namespace convbench

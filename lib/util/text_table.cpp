#include "util/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/markup_escape.hpp"

namespace convbench {

namespace {

std::string pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

Tone TextTable::tone(size_t row, size_t column) const {
  if (row >= tones.size() || column >= tones[row].size()) return Tone::plain;
  return tones[row][column];
}

std::string TextTable::render_terminal(bool colour) const {
  // Cells may hold names from a spec or a results file: control characters are shown escaped,
  // never sent to the terminal.
  std::vector<std::string> header_text;
  for (const auto& h : header) header_text.push_back(printable(h));
  std::vector<std::vector<std::string>> row_text;
  for (const auto& r : rows) {
    row_text.emplace_back();
    for (const auto& cell : r) row_text.back().push_back(printable(cell));
  }
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header_text[c].size();
  for (const auto& r : row_text)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  // Escape codes wrap the padded cell so that they take no width.
  auto line = [&](const std::vector<std::string>& cells, size_t row_index) {
    for (size_t c = 0; c < width.size(); ++c) {
      const bool right = c < right_aligned.size() && right_aligned[c];
      std::string cell = pad(c < cells.size() ? cells[c] : "", width[c], right);  // cells are printable()
      const Tone t = row_index == SIZE_MAX ? Tone::plain : tone(row_index, c);
      if (colour && t != Tone::plain) cell = (t == Tone::better ? "\033[32m" : "\033[31m") + cell + "\033[0m";
      out += (c ? "  " : "") + cell;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  line(header_text, SIZE_MAX);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule, SIZE_MAX);
  for (size_t i = 0; i < row_text.size(); ++i) line(row_text[i], i);
  return out;
}

std::string TextTable::render_markdown() const {
  std::string out = "|";
  for (const auto& h : header) out += " " + markdown_escape(h) + " |";
  out += "\n|";
  for (size_t c = 0; c < header.size(); ++c) out += (c < right_aligned.size() && right_aligned[c]) ? "---:|" : "---|";
  out += '\n';
  for (const auto& r : rows) {
    out += "|";
    for (const auto& cell : r) out += " " + markdown_escape(cell) + " |";
    out += '\n';
  }
  return out;
}

std::string TextTable::render_html() const {
  auto align = [&](size_t c) { return c < right_aligned.size() && right_aligned[c] ? " class=\"num\"" : ""; };
  std::string out = "<table>\n<thead><tr>";
  for (size_t c = 0; c < header.size(); ++c)
    out += std::string("<th") + align(c) + ">" + html_escape(header[c]) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "<tr>";
    for (size_t c = 0; c < rows[r].size(); ++c) {
      std::string classes = c < right_aligned.size() && right_aligned[c] ? "num" : "";
      const Tone t = tone(r, c);
      if (t != Tone::plain)
        classes += std::string(classes.empty() ? "" : " ") + (t == Tone::better ? "better" : "worse");
      out += "<td" + (classes.empty() ? std::string() : " class=\"" + classes + "\"") + ">" + html_escape(rows[r][c]) +
             "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

Tone tone_of_ratio(double ratio) {
  if (format_fixed(ratio, 2) == "1.00") return Tone::plain;
  return ratio < 1.0 ? Tone::better : Tone::worse;
}

std::string format_count(int64_t value) {
  // The magnitude as unsigned: -INT64_MIN does not fit an int64.
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string format_mib(int64_t bytes) {
  return format_fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 2) + " MiB";
}

std::string format_ratio(double value) { return format_fixed(value, 2) + "x"; }

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (bytes < 1024 * 1024) return format_fixed(b / 1024.0, 1) + " KiB";
  if (bytes < int64_t{1024} * 1024 * 1024) return format_mib(bytes);
  return format_fixed(b / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
}

std::string format_giga(int64_t value) { return format_fixed(static_cast<double>(value) / 1e9, 3); }

std::string format_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return format_fixed(value, 0);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  return format_fixed(value, std::max(0, digits - 1 - magnitude));
}

}  // namespace convbench

#include "report/text_table.hpp"

#include <algorithm>
#include <cstdio>

namespace convbench {

namespace {

std::string pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

std::string TextTable::render_terminal() const {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < width.size(); ++c) {
      const bool right = c < right_aligned.size() && right_aligned[c];
      out += (c ? "  " : "") + pad(c < cells.size() ? cells[c] : "", width[c], right);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  line(header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
  return out;
}

std::string TextTable::render_markdown() const {
  std::string out = "|";
  for (const auto& h : header) out += " " + h + " |";
  out += "\n|";
  for (size_t c = 0; c < header.size(); ++c)
    out += (c < right_aligned.size() && right_aligned[c]) ? "---:|" : "---|";
  out += '\n';
  for (const auto& r : rows) {
    out += "|";
    for (const auto& cell : r) out += " " + cell + " |";
    out += '\n';
  }
  return out;
}

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string format_count(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string format_mib(int64_t bytes) { return format_fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 2) + " MiB"; }

std::string format_ratio(double value) { return format_fixed(value, 2) + "x"; }

std::string format_giga(int64_t value) { return format_fixed(static_cast<double>(value) / 1e9, 3); }

}  // namespace convbench

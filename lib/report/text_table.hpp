// A plain table of strings rendered either aligned for a terminal or as a Markdown table.
#pragma once

#include <string>
#include <vector>

namespace convbench {

struct TextTable {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  // per column; numbers are right-aligned
  std::vector<std::vector<std::string>> rows;

  std::string render_terminal() const;
  std::string render_markdown() const;
};

// Number formatting shared by every human-readable format.
std::string format_fixed(double value, int decimals);
std::string format_count(int64_t value);        // 13,920
std::string format_mib(int64_t bytes);          // 12.50 MiB
std::string format_ratio(double value);         // 0.57x
std::string format_giga(int64_t value);         // 2.718 G

}  // namespace convbench

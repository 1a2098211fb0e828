#include "pipeline/peer_failure.hpp"

namespace convbench {
namespace {

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \r\n\t");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

}  // namespace

std::string child_failure(const ChildResult& result) {
  if (result.signal != 0) return "killed by signal " + std::to_string(result.signal);
  std::string line = last_line(result.err);
  if (line.empty()) line = last_line(result.out);
  return "exit code " + std::to_string(result.exit_code) + (line.empty() ? "" : ": " + line);
}

}  // namespace convbench

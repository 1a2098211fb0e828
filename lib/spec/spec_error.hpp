// The one error type for bad input: where it is (file, line, column, key path) and what is wrong.
// Every bad spec ends the program with exit code 2 and this message, and writes no output file.
#pragma once

#include <stdexcept>
#include <string>

namespace convbench {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown (e.g. the file is missing)
  int column = 0;  // 1-based
};

class SpecError : public std::runtime_error {
 public:
  SpecError(SourceLocation where, std::string key_path, const std::string& message);

  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string key_path_;
  std::string message_;
};

// "file:line:column: key.path: message" (line and column left out when unknown).
std::string format_located(const SourceLocation& where, const std::string& key_path,
                           const std::string& message);

}  // namespace convbench

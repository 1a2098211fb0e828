// The one error type for bad input of any kind (a spec, a command-line option, a results file, a
// tensor dump): where it is (file, line, column, key path) and what is wrong. It ends the program
// with exit code 2 and this message, and no output file is written. It lives in util/, below
// every layer, so that any of them can throw it.
#pragma once

#include <stdexcept>
#include <string>

namespace convbench {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown (e.g. the file is missing)
  int column = 0;  // 1-based
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key_path, const std::string& message);

  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string key_path_;
  std::string message_;
};

// "file:line:column: key.path: message" (line and column left out when unknown).
std::string format_located(const SourceLocation& where, const std::string& key_path, const std::string& message);

}  // namespace convbench

#include "util/input_error.hpp"

namespace convbench {

std::string format_located(const SourceLocation& where, const std::string& key_path, const std::string& message) {
  std::string out = where.file;
  if (where.line > 0) out += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
  out += ": ";
  if (!key_path.empty()) out += key_path + ": ";
  return out + message;
}

InputError::InputError(SourceLocation where, std::string key_path, const std::string& message)
    : std::runtime_error(format_located(where, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(message) {}

}  // namespace convbench

// Writing result files all-or-nothing: every output is rendered first, and files are written
// only when all of them rendered, each through a temporary file renamed into place.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace convbench::cli {

class PendingOutputs {
 public:
  void add(std::string path, std::string content) { files_.emplace_back(std::move(path), std::move(content)); }
  // Throws SpecError naming the path when a file cannot be written.
  void write_all() const;

 private:
  std::vector<std::pair<std::string, std::string>> files_;
};

}  // namespace convbench::cli

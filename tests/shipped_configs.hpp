// The spec files shipped in configs/ (.yaml, .yml, .json), sorted: the tests that run every
// config read them from here, so that configs/README.md and any other file beside them is not
// taken for a spec.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace convbench {

inline std::vector<std::string> shipped_configs() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CONVBENCH_SOURCE_DIR) + "/configs")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace convbench

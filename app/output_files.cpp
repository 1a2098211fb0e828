#include "output_files.hpp"

#include <cstdio>
#include <fstream>

#include "spec/spec_error.hpp"

namespace convbench::cli {

void PendingOutputs::write_all() const {
  for (const auto& [path, content] : files_) {
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary);
      out << content;
      if (!out) throw SpecError({path, 0, 0}, "", "cannot write this output file");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw SpecError({path, 0, 0}, "", "cannot write this output file");
    }
  }
}

}  // namespace convbench::cli

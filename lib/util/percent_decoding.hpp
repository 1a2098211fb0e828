// URI text as the programs that read URIs decode it (SQLite's file: URIs, libpq's postgresql://
// ones): each %XX is the byte XX, a malformed escape is left as it is.
#pragma once

#include <string>

namespace convbench {

std::string percent_decoded(const std::string& text);

}  // namespace convbench

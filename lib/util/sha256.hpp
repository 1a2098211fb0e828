// SHA-256 (FIPS 180-4), for the provenance of spec files in result files.
#pragma once

#include <string>
#include <string_view>

namespace convbench {

// Lower-case hex digest of the bytes.
std::string sha256_hex(std::string_view bytes);

}  // namespace convbench

// Where a result came from: convbench version and commit, the command line, the spec file's
// hash, date, host CPU and libraries, and the device the backend ran on.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace convbench {

class Backend;

// "convbench 0.1.0"
std::string engine_name();
// `backend` may be null (analysis only).
nlohmann::json collect_provenance(const std::string& spec_path, Backend* backend);

}  // namespace convbench

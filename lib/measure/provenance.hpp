// Where a result came from: convbench version and commit, the command line, the spec file's
// hash, date, host CPU and libraries, and the device the backend ran on.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "spec/spec.hpp"

namespace convbench {

class Backend;

// "convbench 0.1.0"
std::string engine_name();
// `backend` may be null (analysis only). The spec's file name and the hash of the bytes that were
// read (the file is not opened again: a FIFO or standard input can be read only once).
nlohmann::json collect_provenance(const Spec& spec, Backend* backend);

}  // namespace convbench

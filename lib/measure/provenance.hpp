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
// This machine's name as the system gives it (gethostname), "unknown" when it gives none. It may
// hold any bytes: collect_provenance records it escaped.
std::string this_host_name();
// `backend` may be null (analysis only). The spec's file name and the hash of the bytes that were
// read (the file is not opened again: a FIFO or standard input can be read only once). `host_name`
// is recorded with its stray bytes escaped (\xNN), as is the command line: neither can be refused,
// and the results must still be writable as JSON.
nlohmann::json collect_provenance(const Spec& spec, Backend* backend, const std::string& host_name = this_host_name());

}  // namespace convbench

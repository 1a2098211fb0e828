// Reading an input file (a spec, a results file, a tensor dump) once, carefully: a regular file
// or `-` for standard input, nothing else (a device such as /dev/zero would be read until memory
// runs out; a FIFO can be read only once, so the file is never opened again, and its hash is the
// hash of what was read); at most a size limit; the error names the file and the system's reason.
#pragma once

#include <cstdint>
#include <string>

namespace convbench {

struct InputText {
  std::string name;    // the path as given ("-" is named "standard input" in messages)
  std::string text;    // every byte read
  std::string sha256;  // of `text`, lower-case hex
};

// `what` names the kind of file in messages ("spec file", "results file"). Throws InputError.
InputText read_input_file(const std::string& path, const std::string& what, int64_t max_bytes);

// The limits convbench reads with: specs are written by hand (a few KB), results files carry raw
// samples (a few MB for large sweeps), tensor dumps hold whole tensors.
constexpr int64_t kMaxSpecBytes = int64_t{16} << 20;
constexpr int64_t kMaxResultsBytes = int64_t{1} << 30;
constexpr int64_t kMaxDumpBytes = int64_t{4} << 30;

}  // namespace convbench

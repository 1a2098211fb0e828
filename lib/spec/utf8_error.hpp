// The error for a spec that is not UTF-8, located as precisely as the file allows: the line and
// column of the first stray byte, the key path of the name (or other scalar) that holds it and
// that scalar shown with the byte escaped (\xNN), so that a Latin-1 `name: café` is found at
// once. Such a spec is refused before any work: its names would otherwise reach the results JSON
// only after the run, and a stray byte cannot be written as JSON.
#pragma once

#include <cstddef>
#include <string>

#include "util/input_error.hpp"

namespace convbench {

// `bad` is the offset of the first byte of `text` that is not well-formed UTF-8
// (find_invalid_utf8); `file_name` as the messages name the file.
InputError invalid_utf8_error(const std::string& text, size_t bad, const std::string& file_name);

}  // namespace convbench

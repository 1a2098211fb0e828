// Loads a block spec file (JSON or YAML, same structure) into typed, validated, sweep-expanded
// BlockSpecs. Every problem with the input is a SpecError whose what() reads
// "file:line:col: key.path: message"; nothing the file contains can crash the loader.
//
// Top level: `name` (optional; defaults to the file name without directory and extension),
// `defaults` (block fields applied to every block; a block's own value wins), `blocks`
// (required, non-empty), `sweep` (block field -> non-empty list of values; every block is
// expanded once per point of the cartesian product, block-major, the first sweep key varying
// slowest; a swept value overrides defaults and the block's own value). The block fields,
// variant kinds and custom ops are described in README.md "Spec format" and spec.hpp.
#pragma once

#include <string>

#include "spec/spec.hpp"

namespace convbench {

// Reads and parses the file; a missing or unreadable file is a SpecError at line 0.
Spec load_spec_file(const std::string& path);

// Parses spec text: JSON when `file_name` ends in ".json", YAML otherwise. `file_name` is only
// used in messages and for Spec::file.
Spec parse_spec_text(const std::string& text, const std::string& file_name);

// SHA-256 of the file's bytes, lower-case hex (for the provenance of results).
std::string spec_file_hash(const std::string& path);

}  // namespace convbench

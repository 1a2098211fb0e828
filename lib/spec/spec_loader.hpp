// Loads a block spec file (JSON or YAML, same structure) into typed, validated, sweep-expanded
// BlockSpecs. Every problem with the input is a InputError whose what() reads
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
#include <utility>
#include <vector>

#include "spec/network_spec.hpp"
#include "spec/spec.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

// How much work a spec may expand to. A run is one variant of one block at one sweep point; the
// default keeps a typo (a sweep one axis too long, an alias pasted into every block) from
// building millions of graphs. Commands raise it with --max-runs.
constexpr int64_t kDefaultMaxRuns = 10'000;
// Ops in all runs together may average this many per allowed run (custom op graphs included).
constexpr int64_t kMaxOpsPerRun = 1'000;
struct SpecLimits {
  int64_t max_runs = kDefaultMaxRuns;
  // Sweeps given on the command line (`--sweep batch=1,2,4`): field -> its values as the text
  // of a YAML flow list without brackets. Each replaces the file's sweep of that field, or adds
  // one; the values are checked like the file's (errors name "--sweep" and the field).
  std::vector<std::pair<std::string, std::string>> sweep_overrides;
  // The ops (and entries) one network variant may expand to; commands raise it with
  // --max-network-ops. Last, so that {max_runs, sweeps} initialisers keep their meaning.
  int64_t max_network_ops = kDefaultMaxNetworkOps;
  // A model file given instead of a spec (spec/model_file_spec.hpp): its input shape, as
  // --input gives it ("4x24x48x48x48"); empty takes the model's own.
  std::string model_input{};
  // A model file given instead of a spec: follow symbolic links to its external data
  // (--allow-links; a spec says it per variant, `allow_links: true`).
  bool allow_links = false;
  // Keep a variant whose own file cannot be read as BlockSpec::unreadable (compare and analyze
  // make it a row with status unreadable) instead of refusing the spec with its error.
  bool keep_unreadable = false;
};

// Reads the file once (a regular file, or `-` for standard input; at most kMaxSpecBytes) and
// parses it; Spec::sha256 is the hash of the bytes read. A model file (`block.onnx`) is read as
// the spec of that one block (spec/model_file_spec.hpp). A missing, unreadable or special file is
// a InputError at line 0.
Spec load_spec_file(const std::string& path, const SpecLimits& limits = {});

// Parses spec text: JSON when `path` ends in ".json", YAML otherwise. `path` is only used in
// messages and for Spec::file, with any byte that is not UTF-8 escaped (\xNN): the file's name is
// recorded, never refused. The text must be valid UTF-8 (a bad byte is an error at its line and
// column, naming the key path of the name that holds it; spec/utf8_error.hpp).
Spec parse_spec_text(const std::string& text, const std::string& path, const SpecLimits& limits = {});

// What the size check counts for each variant of a `variants:` list as written, before anything is
// built: its kind's BlockKindDefinition::counted_ops (a folded variant: the variant it folds; a
// kind not known yet: the most of any kind).
std::vector<int64_t> counted_variant_ops(const Field& variants);

}  // namespace convbench

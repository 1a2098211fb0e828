// `--filter REGEX`: run only the variants whose "block/variant" the regular expression matches
// (RE2 syntax, spec/name_regex.hpp; searched anywhere in the name, as grep does). A block keeps its baseline
// whenever any of its variants is kept, so ratios keep their reference; blocks with nothing
// kept are dropped. A bad expression, or one that keeps nothing, is an InputError naming
// --filter (exit 2): an empty run would otherwise succeed and compare nothing.
#pragma once

#include <string>

#include "spec/spec.hpp"

namespace convbench {

void filter_spec(Spec& spec, const std::string& pattern);

}  // namespace convbench

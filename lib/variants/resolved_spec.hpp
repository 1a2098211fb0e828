// The resolved spec: every block at every sweep point, every variant, and every custom op with
// all defaults applied (a custom conv's out_channels, kernel, padding, groups, bias, a pool's
// kernel and stride, ...), as JSON. `convbench validate SPEC --resolved-json FILE` writes it, and
// the PyTorch peer (scripts/torch_peer.py) builds its modules from it instead of parsing specs on
// its own: the spec's rules (defaults, "same" padding, sweeps, "depthwise") live only here.
#pragma once

#include <nlohmann/json.hpp>

#include "spec/spec.hpp"

namespace convbench {

inline constexpr const char* kResolvedSpecSchema = "convbench.resolved-spec/1";

// Builds every variant graph to read the custom ops' resolved attributes, so it throws
// InputError where build_variant_graph does (call it on a validated spec).
nlohmann::ordered_json resolved_spec_json(const Spec& spec);

}  // namespace convbench

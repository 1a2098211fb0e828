// Reads one network of the `networks:` section at one sweep point (configs/README.md "Networks"): its input,
// its slot defaults and its variants, with located errors. Units and stages are checked for their
// structure here (maps, lists, unique stage names); what they mean is checked when a variant is
// expanded (variants/network_builder.hpp), which `validate` and every command do before running.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spec/network_spec.hpp"
#include "spec/spec.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

// `point`: the swept fields at this point (each overrides the network's own value). `tree` owns
// the nodes `network` refers to. `max_ops`: NetworkSpec::max_ops, checked when a variant expands.
BlockSpec parse_network(const Field& network, const std::shared_ptr<const SourceNode>& tree,
                        const std::vector<std::pair<std::string, Field>>& point,
                        int64_t max_ops = kDefaultMaxNetworkOps);

}  // namespace convbench

// `report --against` with a peer file written with --counters (scripts/torch_peer.py): the FLOP
// counters users run (FlopCounterMode, fvcore, ptflops, thop, torchinfo) next to convbench's own
// MACs, each with what its documented rule predicts from those MACs (scripts/peer/counters.py,
// checked by ctest flop_counters_follow_their_rules) and the rule in words, so that a user who
// got 4.1 G from one tool and 8.2 G from another sees why.
#pragma once

#include <optional>

#include "report/peer_comparison.hpp"
#include "util/text_table.hpp"

namespace convbench {

// One row per paired row and counter the peer ran; nullopt when no peer row carries counters.
std::optional<TextTable> flop_counters_table(const PeerComparison& comparison);

}  // namespace convbench

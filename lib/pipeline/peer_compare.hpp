// `compare SPEC --peer torch`: convbench and PyTorch eager (scripts/torch_peer.py) measure the same
// resolved spec with the same stopping rule, threads and --per-op, taking turns block by block
// (each block at each sweep point: convbench's rows of it, then the peer's, in a process of its
// own on that block's resolved spec), so that load from elsewhere falls on both runtimes alike and
// neither runs its whole spec while the other waits.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/compare.hpp"
#include "pipeline/peer_program.hpp"
#include "results/results.hpp"
#include "spec/spec.hpp"

namespace convbench {

struct ComparedWithPeer {
  ResultSet ours;
  nlohmann::json peer_file;  // the peer's results file: every block's rows in one, its provenance
  ResultSet peer;            // read from peer_file
};

// The arguments torch_peer.py gets for one block: its resolved spec, the results file to write,
// the device, the stopping rule, the threads and --per-op of `options` (`threads`: the threads
// convbench computed with).
std::vector<std::string> peer_arguments(const PeerProgram& peer, const std::string& resolved_block,
                                        const std::string& out, const std::string& device,
                                        const CompareOptions& options, int threads);

// Runs `spec` as compare() does, with the peer after each block. A block the peer fails on (its
// process ends badly, or writes a file that does not read) is a warning in the log, and its rows
// are then convbench's alone in the comparison. Throws InputError for --device reference (PyTorch
// has no counterpart) before anything runs.
ComparedWithPeer compare_beside_peer(const Spec& spec, const CompareOptions& options, const PeerProgram& peer,
                                     std::ostream& notices);

}  // namespace convbench

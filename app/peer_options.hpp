// compare --peer torch: its flags, the checks made before any measurement (the peer environment
// included), and the run beside PyTorch with the comparison after convbench's own tables.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "output_options.hpp"
#include "pipeline/compare.hpp"
#include "pipeline/peer_program.hpp"
#include "spec/spec.hpp"

namespace convbench::cli {

struct PeerCliOptions {
  std::string peer;  // "torch", or empty
};

// --peer and --peer-json (into `output.peer_json`).
void add_peer_options(CLI::App& sub, PeerCliOptions& peer, OutputOptions& output);

// What cannot go with --peer (a shard, --explain, --memory-only, --graph, --cold) and --peer-json
// without --peer: InputError. Then finds the peer and asks it for torch
// (pipeline/peer_program.hpp): InputError naming scripts/setup-peers.sh when it is not ready.
PeerProgram check_peer_options(const PeerCliOptions& peer, const CompareOptions& compare, const OutputOptions& output,
                               bool shard, bool explain);

// Runs the spec beside the peer, writes every output (--peer-json too) and prints convbench's
// tables, then the comparison with its verdicts; returns the comparison's exit code (1 when
// parameter or MAC counts differ). `add_to_history` gets convbench's results after the outputs.
int run_beside_peer(const Spec& spec, const CompareOptions& compare, const PeerProgram& peer,
                    const OutputOptions& output, const std::vector<std::string>& inputs,
                    const std::function<void(const ResultSet&)>& add_to_history);

}  // namespace convbench::cli

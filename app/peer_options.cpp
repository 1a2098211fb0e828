#include "peer_options.hpp"

#include <cstdlib>
#include <iostream>

#include "pipeline/peer_compare.hpp"
#include "report/peer_comparison.hpp"
#include "this_program.hpp"
#include "util/input_error.hpp"

namespace convbench::cli {
namespace {

[[noreturn]] void refuse(const char* flag, const std::string& why) {
  throw InputError({"command line", 0, 0}, flag, why);
}

}  // namespace

void add_peer_options(CLI::App& sub, PeerCliOptions& peer, OutputOptions& output) {
  sub.add_option("--peer", peer.peer,
                 "Also run the spec in PyTorch eager (torch: scripts/torch_peer.py in the peer environment, or the "
                 "Python $CONVBENCH_PEER_PYTHON names), block by block in turn with convbench, with the same stopping "
                 "rule, threads and --per-op; after the tables, the comparison and whether the runtimes rank the "
                 "variants alike")
      ->check(CLI::IsMember({"torch"}));
  sub.add_option("--peer-json", output.peer_json, "With --peer: write the peer's results JSON to this file");
}

PeerProgram check_peer_options(const PeerCliOptions& peer, const CompareOptions& compare, const OutputOptions& output,
                               bool shard, bool explain) {
  if (peer.peer.empty()) {
    if (!output.peer_json.empty()) refuse("--peer-json", "is the peer's results file: give --peer torch too");
    return {};
  }
  if (shard) refuse("--peer", "compares a whole run, not a shard");
  if (explain)
    refuse("--peer",
           "and --explain: --explain says why on convbench's runtime (`convbench explain`); with --peer, give "
           "--per-op N to compare the two runtimes op by op");
  if (!compare.run.time) refuse("--peer", "compares times; --memory-only takes none");
  if (compare.run.graph) refuse("--peer", "PyTorch eager has no counterpart of --graph's replayed CUDA graph");
  if (compare.run.cold) refuse("--peer", "the peer does not evict caches before its samples: leave out --cold");
  return find_torch_peer(this_program(), std::getenv("CONVBENCH_PEER_PYTHON"));
}

int run_beside_peer(const Spec& spec, const CompareOptions& compare, const PeerProgram& peer,
                    const OutputOptions& output, const std::vector<std::string>& inputs,
                    const std::function<void(const ResultSet&)>& add_to_history) {
  const ComparedWithPeer run = compare_beside_peer(spec, compare, peer, std::cerr);
  const PeerComparison comparison = compare_with_peer(run.ours, run.peer);
  write_results(output, run.ours, inputs,
                {&comparison, run.peer_file.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"});
  add_to_history(run.ours);
  return comparison.exit_code();
}

}  // namespace convbench::cli

// What a variant's graph is, in the figures a reader compares when it changed: its one-line
// structure and its counts (parameters, MACs per direction, bytes saved for backward, predicted
// peak). `diff` prints the change between two rows of the same block and variant whose graphs
// differ, and `history check` keeps these facts with every measurement so that a changed block
// is compared with its previous graph's series: counts and memory across the change, and the
// change itself in words.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "results/results.hpp"

namespace convbench {

struct GraphFacts {
  std::string graph_hash, structure;
  int64_t params = 0, macs_forward = 0, macs_backward = 0, saved_bytes = 0, predicted_peak_bytes = 0;
};

GraphFacts graph_facts(const ResultRow& row);
nlohmann::json to_json(const GraphFacts& facts);
// nullopt for anything that is not an object with the fields to_json writes (a history written
// before the facts were kept has none).
std::optional<GraphFacts> graph_facts_from_json(const nlohmann::json& j);

// "structure: conv3x3 ... -> conv1x1 ...; params 9,248 -> 18,496 (+100.0%); forward MACs ..."
// listing only what differs; "" when nothing does. The graph hash is not repeated: the caller
// says that the graph changed.
std::string graph_change_text(const GraphFacts& before, const GraphFacts& after);

}  // namespace convbench

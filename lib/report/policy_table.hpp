// What a memory policy buys (configs/README.md "Memory policies"): per row that runs with a policy, the
// same variant without it side by side (the row of the block whose graph_hash is the policy row's
// plain_graph_hash: a variant written twice with and without `memory_policy`, or one variant at
// two points of a `memory_policy` sweep): the tensors and bytes kept for backward, the peak and
// the time, with one sentence each, written by fixed rules from those figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/summary_tables.hpp"
#include "results/results.hpp"

namespace convbench {

// `block_rows`: the rows of one block and mode (every sweep point). Empty unless some row has a
// policy and its plain row is among them.
std::optional<BlockTable> policies_table(const std::vector<const ResultRow*>& block_rows);
// The sentences under the table, one per row of it, and what the columns mean.
std::string policies_note(const std::vector<const ResultRow*>& block_rows);

}  // namespace convbench

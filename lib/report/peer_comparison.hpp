// `convbench report OURS --against PEER`: convbench's results side by side with an independent
// engine's (scripts/torch_peer.py writes the same schema), row by row.
//
// Rows pair by (block, variant, point_label). Parameters and MACs (forward, backward-data,
// backward-weight) must agree exactly: any difference is a MISMATCH and exit code 1. Times are
// compared as ratios ours / peer of the medians (forward, backward, step). Memory: the ratio of
// measured peaks when both engines measured one (CUDA), else of the bytes saved for backward
// (ours: measured by the allocator, or predicted when the file has no measurement; the peer's:
// what autograd saves, both without the block input). Per block and sweep point, the ranking
// verdict says whether the two runtimes rank the variants alike (report/peer_ranking.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/peer_ranking.hpp"
#include "report/summary_tables.hpp"
#include "results/results.hpp"
#include "results/row_pairing.hpp"

namespace convbench {

enum class MemoryMeasure { none, peak, saved_measured, saved_predicted };

struct CountCheck {
  std::string name;  // params | MACs fwd | MACs bwd-data | MACs bwd-weight
  int64_t ours = 0, peer = 0;
  bool match() const { return ours == peer; }
};

struct PeerRow {
  RowKey key;
  const ResultRow* ours = nullptr;
  const ResultRow* peer = nullptr;
  bool counts_known = false;                      // both rows carry counts (a row that failed early has none)
  std::vector<CountCheck> counts;                 // empty unless counts_known
  std::optional<double> forward, backward, step;  // time ratios ours / peer (medians)
  MemoryMeasure memory_measure = MemoryMeasure::none;
  int64_t ours_memory = 0, peer_memory = 0;
  std::optional<double> memory;  // ours / peer
  bool mismatch() const;
};

struct PeerComparison {
  std::string ours_engine, peer_engine, ours_device, peer_device;
  RuntimeNames names;  // what the verdicts call the runtimes: "convbench", "PyTorch"
  std::vector<PeerRow> rows;
  std::vector<RowKey> only_in_ours, only_in_peer;
  std::vector<RankingVerdict> rankings;  // per block and sweep point with times (report/peer_ranking.hpp)
  int mismatches() const;
  int exit_code() const { return mismatches() > 0 ? 1 : 0; }
};

// The result sets must outlive the comparison (rows point into them).
PeerComparison compare_with_peer(const ResultSet& ours, const ResultSet& peer);
// The comparison points into both sets' rows: temporaries would leave it dangling.
PeerComparison compare_with_peer(ResultSet&& ours, const ResultSet& peer) = delete;
PeerComparison compare_with_peer(const ResultSet& ours, ResultSet&& peer) = delete;
PeerComparison compare_with_peer(ResultSet&& ours, ResultSet&& peer) = delete;

// Per block: a counts table (both engines' values, MISMATCH flagged), a time and memory table
// (ratios) and, where rows were timed, the ranking of the variants in each runtime with its
// verdict; then the rows found in one file only and a footnote saying which memory was compared.
std::string format_peer_comparison(const PeerComparison& comparison, TableStyle style);
// The same tables as an HTML <section> for the HTML report.
std::string peer_comparison_html(const PeerComparison& comparison);

}  // namespace convbench

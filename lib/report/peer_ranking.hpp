// The ranking verdict of a peer comparison (`report --against`, `compare --peer`): per block and
// sweep point, the variants ranked by their headline time (the step in training, the forward pass
// in inference) in each runtime, each one's ratio to the baseline in its own runtime, and whether
// the two runtimes tell the same story: the same order, and every variant on the same side of the
// baseline. A variant can be 0.20x the baseline on convbench's cpu runtime and 1.08x in PyTorch
// eager on the same CPU; both are true of their runtimes, and a user who trains with PyTorch must
// hear it. Where the runtimes disagree, the ops whose times differ most between them (both
// sides' op_times, --per-op) say why: often one runtime's kernel for one op, not the block.
//
// Rules (why these values):
//  - a ratio within kSameSide of 1.00x is on neither side of the baseline, and two variants within
//    kSameSide of each other are tied: medians on a shared CPU move by a few percent between two
//    runs of the same engine, so a smaller difference ranks nothing. The runtimes disagree on a
//    variant when they put it on different sides (faster, as fast, slower) with ratios more than
//    kSameSide apart, or rank two variants the other way round, each beyond a tie;
//  - a paired row whose times are not to be trusted (results/trust.hpp: noisy or disturbed, on
//    either side) makes the verdict "not concluded": the ranks are shown, no conclusion is drawn;
//  - an op's excess is its time in the peer minus its time in ours times the group's typical
//    ratio (the median of peer / ours over the ranked rows): what the op costs in the peer beyond
//    the peer's general pace. A disagreement between a variant and another (the baseline, or a
//    variant ranked the other way) names the largest excesses in its direction, each over its
//    row's time in the peer (the variant's own ops, and the other's with the sign turned), until
//    they cover kExplainedShare of them all, at most kMaxOpsNamed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "results/results.hpp"
#include "results/row_pairing.hpp"

namespace convbench {

inline constexpr double kSameSide = 0.05;
inline constexpr double kExplainedShare = 0.8;
inline constexpr size_t kMaxOpsNamed = 3;

enum class Side { faster, same, slower };
std::string to_string(Side s);  // "faster" | "same" | "slower"
Side side_of(double ratio);     // the side of the baseline a ratio to it is on

struct RankedVariant {
  std::string variant;
  const ResultRow* ours = nullptr;
  const ResultRow* peer = nullptr;
  double ours_ms = 0, peer_ms = 0;   // headline medians
  double ours_x = 1, peer_x = 1;     // over the baseline's, each in its own runtime
  int ours_rank = 0, peer_rank = 0;  // 1 = fastest; tied variants (kSameSide) share a rank
  bool is_baseline = false;
};

struct OpDifference {
  std::string variant, op;  // the row whose op it is, and the op
  double ours_ms = 0, peer_ms = 0;
  double weight = 0;  // its share of the disagreement: excess over the row's time in the peer (> 0)
};

struct Disagreement {
  std::string variant, other;  // `other`: the baseline (side) or a variant ranked the other way
  bool side = false;           // the runtimes put `variant` on different sides of the baseline
  std::vector<OpDifference> ops;
  std::vector<std::string> without_op_times;  // the runtimes whose rows of the two variants have no op_times
};

enum class RankingStatus { agree, disagree, not_concluded, nothing_to_rank };

struct RankingVerdict {
  std::string block, point_label, baseline;
  bool training = true;
  std::vector<RankedVariant> variants;  // the ranked rows, in row order (the baseline among them)
  std::vector<std::string> unranked;    // rows without a headline time on a side: "x (PyTorch: error)"
  std::vector<std::string> untrusted;   // "separable in convbench: disturbed"
  double typical_ratio = 0;             // median of peer / ours over the ranked rows
  RankingStatus status = RankingStatus::nothing_to_rank;
  std::string nothing_because;  // why there is nothing to rank
  std::vector<Disagreement> disagreements;
  // Per row with op_times on both sides: the ops named on one side only ("variant: op"), the ones
  // whose phases differ ("variant: op: why"), and how many were matched.
  std::vector<std::string> ops_only_in_ours, ops_only_in_peer, ops_not_comparable;
  int ops_matched = 0;
  int rows_with_op_times = 0;  // rows with op_times on both sides
  bool any_op_times = false;   // some row has op_times on some side
};

// What the sentences call the two runtimes: "convbench" and "PyTorch".
struct RuntimeNames {
  std::string ours, peer;
};

// `pairs`: the paired rows (ours left, peer right), in ours' row order. One verdict per block and
// sweep point with a timed row on either side (an analysis has none: no verdict).
std::vector<RankingVerdict> rank_runtimes(const std::vector<RowPair>& pairs, const RuntimeNames& names);
// The verdict and what supports it, one plain-text sentence per entry (the caller escapes them
// for its format): the verdict first, then one per disagreement, then the op names' match.
std::vector<std::string> verdict_sentences(const RankingVerdict& v, const RuntimeNames& names);
// One line for a whole comparison: how many block points agree, disagree, are not concluded.
std::string rankings_summary(const std::vector<RankingVerdict>& verdicts);

}  // namespace convbench

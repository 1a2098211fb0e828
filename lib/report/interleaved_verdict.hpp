// `convbench diff --interleave BASE.yaml NEW.yaml`: the verdict of two specs measured in one
// process, in rounds that alternate which side runs first (pipeline/interleaved_diff.hpp), so that
// a machine's drift and its neighbours' bursts fall on both sides alike. On a shared runner, where
// separate runs are disturbed and not judged, the pairing still gives a time verdict.
//
// Per row (paired as diff pairs them), the headline time (the step in train mode, the forward
// pass in infer mode), from the rounds in which both sides ran:
//   ratio      per round, the fastest sample of new over the fastest of base (a neighbour's work
//              only adds time, so the minimum is what a burst disturbs least: Chen and Revels,
//              "Robust benchmarking in noisy environments", 2016); their geometric mean g. The
//              table shows the median over the rounds of each side's minimum.
//   SAME       |g - 1| <= the time threshold
//   SLOWER     g > 1 + threshold and every round's ratio > 1 (the rounds agree on the direction:
//              with 5 rounds, a sign test's one-sided p = 1/32)
//   FASTER     the mirror image
//   AMBIGUOUS  beyond the threshold, but some round went the other way
// A round in which a side was disturbed still counts: both sides ran in it, next to each other.
// Memory, status, missing rows and a changed graph are judged as `diff` judges them, on the first
// round (the memory pass is exact). Exit codes are diff's (regression_diff.hpp).
#pragma once

#include <string>
#include <vector>

#include "report/regression_diff.hpp"
#include "results/results.hpp"

namespace convbench {

// `base_rounds[r]` and `new_rounds[r]`: the two specs' rows measured in round r (each set holds
// every row of its spec, in spec order). Throws InputError (exit 2) as diff_results does when no
// row pairs.
DiffReport interleaved_report(const std::vector<ResultSet>& base_rounds, const std::vector<ResultSet>& new_rounds,
                              const DiffOptions& options, const std::string& base_name, const std::string& new_name);

}  // namespace convbench

// `convbench diff --interleave BASE NEW`: two specs (the main branch's and a change's, say)
// measured in one process, in rounds. Round 1 runs the rows in spec order, base first in each
// pair; round 2 in reverse order, new first; and so on, so that a machine that slows down, speeds
// up or is shared with a burst of other work falls on both sides of every comparison. Rows pair
// as diff pairs them (block, point, variant); rows on one side only are not measured.
// report/interleaved_verdict.hpp judges the rounds.
#pragma once

#include <ostream>
#include <vector>

#include "pipeline/compare.hpp"
#include "results/results.hpp"
#include "spec/spec.hpp"

namespace convbench {

inline constexpr int kMaxInterleavedRounds = 50;

struct InterleavedOptions {
  CompareOptions compare;  // device, measurement, threads, quiet
  int rounds = 5;
};

struct InterleavedRuns {
  std::vector<ResultSet> base, next;  // one set per round, every row of its spec (unpaired rows unmeasured)
};

// Validates both specs first (InputError, exit 2, for either). Progress and notices as compare's.
InterleavedRuns measure_interleaved(const Spec& base, const Spec& next, const InterleavedOptions& options,
                                    std::ostream& notices);

}  // namespace convbench

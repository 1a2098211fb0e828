// The `advise` pipeline: for each of the user's variants (default: each block's baseline), every
// change that applies (pipeline/advice_candidates.hpp) measured against the variant as written,
// in rounds: round 1 runs the original first and the changes after it, round 2 the changes in
// reverse and the original last, and so on, so that a machine that slows down or speeds up during
// the run falls on both sides of every comparison. Each change is judged against the original of
// its own round (report/advice.hpp).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "pipeline/compare.hpp"
#include "report/advice.hpp"
#include "spec/spec.hpp"

namespace convbench {

struct AdviseOptions {
  CompareOptions compare;             // device, measurement, threads, quiet
  std::vector<std::string> variants;  // the user's variants by name; empty: each block's baseline
  int rounds = 2;
  double time_threshold = 0.05;
  double memory_threshold = 0.01;
};

inline constexpr int kMaxAdviceRounds = 20;

// Validates the whole spec first; a --variant naming no variant of any block throws InputError.
Advice advise(const Spec& spec, const AdviseOptions& options, std::ostream& notices);

}  // namespace convbench

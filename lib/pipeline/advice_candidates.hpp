// What `convbench advise` tries for one of the user's variants: each change a user can make
// without rewriting the block (another memory policy, the other layout with and without the
// boundary conversion, folding, another thread count on a host backend), as a block that builds,
// and why each change that does not apply was left out.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/advice.hpp"
#include "spec/spec.hpp"

namespace convbench {

// A change (report/advice.hpp) and what runs to measure it: a copy of the user's block with the
// change, and the index of the variant to run (the other variants stay, so that a folded variant
// finds its source).
struct AdviceCandidate : AdviceChange {
  BlockSpec block;
  size_t variant = 0;
};

struct AdviceCandidates {
  AdviceCandidate original;  // the variant as written
  std::string original_graph_hash;
  std::vector<AdviceCandidate> tries;
  std::vector<std::pair<std::string, std::string>> not_tried;  // change -> why
};

// `threads`: what the run computes with on a host backend (0 on a GPU), and `thread_choices` the
// other counts to try there. Every candidate returned builds (build_variant_graph did not throw);
// a change that cannot apply is in not_tried with the builder's reason.
AdviceCandidates advice_candidates(const BlockSpec& block, size_t variant, int threads,
                                   const std::vector<int>& thread_choices);

// The thread counts worth trying on a machine that lets the process use `cpus` CPUs, besides
// `threads`: one, half, all but one (what leaves a CPU to the rest of the machine) and all.
std::vector<int> thread_choices(int threads, int cpus);

}  // namespace convbench

// What `convbench advise` found: for one of the user's variants, what each change that applies
// (a memory policy, the other layout, folding, another thread count) bought against the variant
// as the user wrote it, measured in the same run, round by round; and the ranking of the changes.
// pipeline/advise.hpp measures it; report/advice_output.hpp prints it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/regression_diff.hpp"
#include "results/results.hpp"

namespace convbench {

// One change to the user's variant (or none: "as written"), as a user makes it.
struct AdviceChange {
  std::string change;    // "as written", "memory_policy: inplace_abn", "--threads 1", ...
  std::string category;  // original | memory_policy | layout | fold | threads
  // Where the change is written: a key path of the spec ("blocks[0]", "blocks[0].variants[1]") and
  // the YAML lines to put there, or "command line" and the flag.
  std::string where;
  std::vector<std::string> lines;
  std::string note;  // what else the change means (InPlaceABN's leaky slope, the network's layout)
  int threads = 0;   // the threads it computes with (host backends; 0 on a GPU)
};

// A change, measured.
struct AdviceTry : AdviceChange {
  std::vector<ResultRow> rounds;  // one measured row per round, in round order
};

// A try against the user's original, round by round (each round measures both).
struct AdviceJudgement {
  std::vector<double> round_ratios;  // the headline time's median over the original's, per round both ran and were
                                     // not disturbed
  std::optional<double> time_ratio;  // their geometric mean
  Verdict time = Verdict::not_compared;
  // "not judged: round 1 was disturbed (...)", "judged on 1 of 2 rounds: ...", "judged, but round 2 was noisy (...)"
  std::string time_note;
  int64_t peak_bytes = 0, original_peak_bytes = 0;
  std::optional<double> peak_ratio;
  Verdict memory = Verdict::not_compared;
  std::string outcome;  // "faster, same memory", "less memory, same time", "failed: oom", ...
  int rank_group = 0;   // 0 is best (advice_rank_groups below)
};

struct AdviceSubject {
  std::string block, point_label, variant, mode, device;
  std::string variant_key;  // blocks[0].variants[1]
  AdviceTry original;       // the variant as written, measured in every round (first, then last)
  std::vector<AdviceTry> tried;
  std::vector<std::pair<std::string, std::string>> not_tried;  // change -> why it does not apply
  std::vector<std::string> warnings;                           // the original's time moved between rounds, ...
};

struct Advice {
  std::string engine, device;
  nlohmann::json provenance = nlohmann::json::object();
  int rounds = 2;
  double time_threshold = 0.05, memory_threshold = 0.01;
  bool timed = true;  // false: --memory-only (memory is judged alone)
  std::vector<AdviceSubject> subjects;
};

// The rank groups, best first: what a judgement's rank_group indexes.
const std::vector<std::string>& advice_rank_groups();

// Judges `t` against the original, round by round, with diff's rules (report/regression_diff.hpp):
// a round's time verdict needs the two medians `time_threshold` apart and their quartiles apart;
// the rounds must agree, or the verdict is AMBIGUOUS; a disturbed row's round is not judged.
AdviceJudgement judge_try(const Advice& advice, const AdviceTry& original, const AdviceTry& t);

// subject.tried in rank order, best first (by rank group, then time ratio, then peak ratio), each
// with its judgement.
struct RankedTry {
  size_t index = 0;  // into subject.tried
  AdviceJudgement judgement;
};
std::vector<RankedTry> advice_ranking(const Advice& advice, const AdviceSubject& subject);

// The memory a try is judged by: the measured figures of its first round that has them, else the
// predicted ones; null for a try with no round.
const MemoryFigures* advice_memory(const AdviceTry& t);
// Its peak: advice_memory's peak bytes, 0 without one.
int64_t advice_peak(const AdviceTry& t);

}  // namespace convbench

#include "report/advice.hpp"

#include <algorithm>
#include <cmath>

#include "results/trust.hpp"

namespace convbench {
namespace {

// Rank groups, best first. A change that buys time without costing memory comes before one that
// buys memory at the same time, before a trade-off, before nothing measurable, before a loss.
enum Group { kFasterGroup, kLeanerGroup, kTradeOffGroup, kNoGainGroup, kWorseGroup, kFailedGroup };

Verdict combine_rounds(const std::vector<Verdict>& verdicts) {
  if (verdicts.empty()) return Verdict::not_compared;
  for (Verdict v : verdicts)
    if (v != verdicts.front()) return Verdict::ambiguous;
  return verdicts.front();
}

std::string time_words(Verdict v, bool timed) {
  switch (v) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same: return "same time";
    case Verdict::ambiguous: return "time unclear";
    default: return timed ? "time not judged" : "";
  }
}

std::string memory_words(Verdict v) {
  switch (v) {
    case Verdict::less: return "less memory";
    case Verdict::more: return "more memory";
    case Verdict::same: return "same memory";
    default: return "memory not judged";
  }
}

}  // namespace

const std::vector<std::string>& advice_rank_groups() {
  static const std::vector<std::string> groups = {
      "faster", "leaner", "trade-off", "no measurable gain", "worse", "failed",
  };
  return groups;
}

const MemoryFigures* advice_memory(const AdviceTry& t) {
  for (const ResultRow& r : t.rounds)
    if (has_measured_peak(r)) return &*r.measured;
  return t.rounds.empty() ? nullptr : &t.rounds.front().predicted;
}

int64_t advice_peak(const AdviceTry& t) {
  const MemoryFigures* m = advice_memory(t);
  return m ? m->peak_bytes : 0;
}

AdviceJudgement judge_try(const Advice& advice, const AdviceTry& original, const AdviceTry& t) {
  AdviceJudgement j;
  const ResultRow* failed = nullptr;
  for (const ResultRow& r : t.rounds)
    if (!ran(r) && !failed) failed = &r;
  if (failed || t.rounds.empty()) {
    j.rank_group = kFailedGroup;
    j.outcome =
        failed ? "failed: " + to_string(failed->status) + (failed->message.empty() ? "" : " (" + failed->message + ")")
               : "failed: not run";
    return j;
  }
  j.peak_bytes = advice_peak(t);
  j.original_peak_bytes = advice_peak(original);
  if (j.original_peak_bytes > 0) {
    j.peak_ratio = static_cast<double>(j.peak_bytes) / static_cast<double>(j.original_peak_bytes);
    j.memory = memory_verdict(j.original_peak_bytes, j.peak_bytes, advice.memory_threshold);
  }
  if (advice.timed) {
    std::vector<Verdict> verdicts;
    std::vector<std::string> disturbed, noisy;
    double log_sum = 0;
    const size_t rounds = std::min(original.rounds.size(), t.rounds.size());
    for (size_t k = 0; k < rounds; ++k) {
      const ResultRow& base = original.rounds[k];
      const ResultRow& next = t.rounds[k];
      const std::optional<TimeStats>& bt = headline_time(base);
      const std::optional<TimeStats>& nt = headline_time(next);
      if (!ran(base) || !bt || !nt || bt->median <= 0) continue;
      const TrustAssessment bt_trust = assess_trust(base), nt_trust = assess_trust(next);
      const std::string round = "round " + std::to_string(k + 1);
      if (bt_trust.level == Trust::disturbed || nt_trust.level == Trust::disturbed) {
        disturbed.push_back(round + " was disturbed (" +
                            evidence_text(nt_trust.level == Trust::disturbed ? nt_trust : bt_trust) + ")");
        continue;
      }
      if (bt_trust.level == Trust::noisy || nt_trust.level == Trust::noisy)
        noisy.push_back(round + " was noisy (" + evidence_text(nt_trust.level == Trust::noisy ? nt_trust : bt_trust) +
                        ")");
      const double ratio = nt->median / bt->median;
      j.round_ratios.push_back(ratio);
      log_sum += std::log(ratio);
      verdicts.push_back(time_verdict(*bt, *nt, advice.time_threshold));
    }
    if (!j.round_ratios.empty()) j.time_ratio = std::exp(log_sum / static_cast<double>(j.round_ratios.size()));
    j.time = combine_rounds(verdicts);
    if (verdicts.empty())
      j.time_note = disturbed.empty() ? "not judged: no round timed both" : "not judged: " + disturbed.front();
    else if (!disturbed.empty())
      j.time_note = "judged on " + std::to_string(verdicts.size()) + " of " + std::to_string(rounds) +
                    " rounds: " + disturbed.front();
    else if (!noisy.empty())
      j.time_note = "judged, but " + noisy.front();
  }
  const bool faster = j.time == Verdict::faster, slower = j.time == Verdict::slower;
  const bool leaner = j.memory == Verdict::less, fatter = j.memory == Verdict::more;
  if (faster && !fatter)
    j.rank_group = kFasterGroup;
  else if (leaner && !slower)
    j.rank_group = kLeanerGroup;
  else if ((faster && fatter) || (leaner && slower))
    j.rank_group = kTradeOffGroup;
  else if (slower || fatter)
    j.rank_group = kWorseGroup;
  else
    j.rank_group = kNoGainGroup;
  // Say first what the change buys: a leaner change leads with its memory.
  const std::string time = time_words(j.time, advice.timed), memory = memory_words(j.memory);
  if (!advice.timed)
    j.outcome = memory;
  else if (j.rank_group == kLeanerGroup || (leaner && slower))
    j.outcome = memory + ", " + time;
  else
    j.outcome = time + ", " + memory;
  return j;
}

std::vector<RankedTry> advice_ranking(const Advice& advice, const AdviceSubject& subject) {
  std::vector<RankedTry> ranked;
  for (size_t i = 0; i < subject.tried.size(); ++i)
    ranked.push_back({i, judge_try(advice, subject.original, subject.tried[i])});
  // Missing ratios sort last within their group; ties keep the order the changes were tried in.
  const auto key = [](const std::optional<double>& v) { return v ? *v : HUGE_VAL; };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const RankedTry& a, const RankedTry& b) {
    const AdviceJudgement& x = a.judgement;
    const AdviceJudgement& y = b.judgement;
    if (x.rank_group != y.rank_group) return x.rank_group < y.rank_group;
    // Within "leaner", the leanest first; elsewhere, the fastest first.
    if (x.rank_group == kLeanerGroup && key(x.peak_ratio) != key(y.peak_ratio))
      return key(x.peak_ratio) < key(y.peak_ratio);
    if (key(x.time_ratio) != key(y.time_ratio)) return key(x.time_ratio) < key(y.time_ratio);
    return key(x.peak_ratio) < key(y.peak_ratio);
  });
  return ranked;
}

}  // namespace convbench

#include "report/policy_table.hpp"

#include <cstdlib>

#include "report/result_columns.hpp"
#include "results/trust.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

struct PolicyPair {
  const ResultRow* with = nullptr;
  const ResultRow* plain = nullptr;
};

std::vector<PolicyPair> pairs_of(const std::vector<const ResultRow*>& rows) {
  std::vector<PolicyPair> pairs;
  for (const ResultRow* r : rows) {
    if (r->memory_policy == "none" || r->plain_graph_hash.empty()) continue;
    for (const ResultRow* p : rows)
      if (p->memory_policy == "none" && p->graph_hash == r->plain_graph_hash) {
        pairs.push_back({r, p});
        break;
      }
  }
  return pairs;
}

std::string label(const ResultRow& r) { return r.variant + (r.point_label.empty() ? "" : " [" + r.point_label + "]"); }

std::string signed_mib(int64_t bytes) { return (bytes < 0 ? "-" : "+") + format_mib(std::llabs(bytes)); }

std::string tensors(int64_t n) { return std::to_string(n) + (n == 1 ? " tensor" : " tensors"); }

bool disturbed(const ResultRow& r) { return assess_trust(r).level == Trust::disturbed; }

// The headline time's ratio, when both rows ran and were timed, and neither was disturbed (their
// times would say more about the machine than about the policy).
std::optional<double> time_ratio(const PolicyPair& p) {
  const std::optional<TimeStats>& a = headline_time(*p.with);
  const std::optional<TimeStats>& b = headline_time(*p.plain);
  if (!ran(*p.with) || !ran(*p.plain) || !a || !b || b->median <= 0) return std::nullopt;
  if (disturbed(*p.with) || disturbed(*p.plain)) return std::nullopt;
  return a->median / b->median;
}

}  // namespace

std::optional<BlockTable> policies_table(const std::vector<const ResultRow*>& block_rows) {
  const std::vector<PolicyPair> pairs = pairs_of(block_rows);
  if (pairs.empty()) return std::nullopt;
  const bool train = is_training(*block_rows.front());
  TextTable t;
  t.header = {
      "variant", "policy", "against", "saved", "saved Δ", "peak", "peak Δ", "peak x", train ? "step x" : "fwd x",
      "FLOP x"};
  t.right_aligned = {false, false, false, true, true, true, true, true, true, true};
  for (const PolicyPair& p : pairs) {
    const int64_t peak = shown_peak(*p.with), plain_peak = shown_peak(*p.plain);
    const std::optional<double> time = time_ratio(p);
    const double flops = static_cast<double>(headline_flops(*p.with)),
                 plain_flops = static_cast<double>(headline_flops(*p.plain));
    const double peak_x = plain_peak > 0 ? static_cast<double>(peak) / static_cast<double>(plain_peak) : 0.0;
    t.rows.push_back({label(*p.with), p.with->memory_policy, label(*p.plain), format_mib(p.with->predicted.saved_bytes),
                      signed_mib(p.with->predicted.saved_bytes - p.plain->predicted.saved_bytes), format_mib(peak),
                      signed_mib(peak - plain_peak), plain_peak > 0 ? format_ratio(peak_x) : "-",
                      time ? format_ratio(*time) : "-", plain_flops > 0 ? format_ratio(flops / plain_flops) : "-"});
    std::vector<Tone> tones(t.header.size(), Tone::plain);
    if (plain_peak > 0) tones[7] = tone_of_ratio(peak_x);
    if (time) tones[8] = tone_of_ratio(*time);
    t.tones.push_back(std::move(tones));
  }
  const ResultRow& first = *block_rows.front();
  return BlockTable{
      first.block + ": what each memory policy buys, against the same variant without it", std::move(t), {}};
}

std::string policies_note(const std::vector<const ResultRow*>& block_rows) {
  std::string note;
  for (const PolicyPair& p : pairs_of(block_rows)) {
    const ResultRow& r = *p.with;
    const ResultRow& plain = *p.plain;
    std::string s = "- " + label(r) + ": " + r.memory_policy;
    if (r.predicted.saved_tensors >= 0 && r.predicted.saved_tensors == plain.predicted.saved_tensors &&
        r.predicted.saved_bytes == plain.predicted.saved_bytes)
      s += " keeps the same " + tensors(r.predicted.saved_tensors) + " for backward";
    else if (r.predicted.saved_tensors >= 0 && plain.predicted.saved_tensors >= 0)
      s += " keeps " + tensors(r.predicted.saved_tensors) + " for backward instead of " +
           tensors(plain.predicted.saved_tensors) + " (" +
           signed_mib(r.predicted.saved_bytes - plain.predicted.saved_bytes) + ")";
    else
      s += " keeps " + signed_mib(r.predicted.saved_bytes - plain.predicted.saved_bytes) + " for backward";
    const int64_t delta = shown_peak(r) - shown_peak(plain);
    s += delta == 0 ? "; the peak is unchanged" : "; the peak moves " + signed_mib(delta);
    if (const std::optional<double> time = time_ratio(p))
      s += "; the " + std::string(is_training(r) ? "step" : "forward pass") + " takes " + format_ratio(*time) +
           " the time";
    else if (headline_time(r) && headline_time(plain) && (disturbed(r) || disturbed(plain)))
      s += "; the times are not compared (disturbed: see the warnings)";
    if (r.flops.recompute > 0)
      s += "; the forward run again in backward adds " + format_giga(r.flops.recompute) + " GFLOP";
    note += s + ".\n";
    if (!r.policy_note.empty()) note += "  " + r.policy_note + ".\n";
  }
  if (note.empty()) return "";
  return note +
         "saved: bytes kept for backward at the end of forward (predicted); Δ and x: against the row in `against`, "
         "the same variant without a policy; peak: measured when the row has it, else predicted.\n";
}

}  // namespace convbench

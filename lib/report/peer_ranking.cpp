#include "report/peer_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "results/trust.hpp"
#include "util/join.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

bool timed(const ResultRow* r) {
  if (r == nullptr || r->status != RunStatus::ok) return false;
  const auto& t = headline_time(*r);
  return t && t->median > 0;
}

std::string why_untimed(const ResultRow& r) {
  if (r.status != RunStatus::ok) return to_string(r.status);
  return "not timed";
}

// "faster than the baseline (standard)", "as fast as it (within 5%)".
std::string side_phrase(Side s, const std::string& what) {
  if (s == Side::same) return "as fast as " + what + " (within " + format_fixed(kSameSide * 100.0, 0) + "%)";
  return to_string(s) + " than " + what;
}

std::string ms_text(double ms) { return format_significant(ms, 3) + " ms"; }

bool has_op_times(const ResultRow& r) { return r.op_times.is_object() && !r.op_times.empty(); }

bool has_phase(const nlohmann::json& entry, const char* phase) {
  return entry.is_object() && entry.contains(phase) && entry[phase].is_number();
}

// Why one op's times cannot be set side by side ("" when they can): both must time its forward,
// and both its backward or neither (an op whose output needs no gradient has none on either side).
std::string not_comparable(const ResultRow& ours, const ResultRow& peer, const std::string& op,
                           const RuntimeNames& names) {
  const nlohmann::json& o = ours.op_times[op];
  const nlohmann::json& p = peer.op_times[op];
  std::string why;
  if (!has_phase(o, "forward_ms") || !has_phase(p, "forward_ms"))
    why = "its forward is not timed by " + (has_phase(o, "forward_ms") ? names.peer : names.ours);
  else if (is_training(ours) && has_phase(o, "backward_ms") != has_phase(p, "backward_ms"))
    why = (has_phase(o, "backward_ms") ? names.ours : names.peer) + " times its backward, " +
          (has_phase(o, "backward_ms") ? names.peer : names.ours) + " does not";
  if (why.empty()) return "";
  for (const nlohmann::json* entry : {&p, &o})
    if (entry->is_object() && entry->contains("note") && (*entry)["note"].is_string())
      return why + " (" + (*entry)["note"].get<std::string>() + ")";
  return why;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

void assign_ranks(std::vector<RankedVariant>& vs, double RankedVariant::*x, int RankedVariant::*rank) {
  std::vector<size_t> order(vs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return vs[a].*x < vs[b].*x; });
  double tie_start = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    RankedVariant& v = vs[order[i]];
    if (i > 0 && v.*x <= tie_start * (1.0 + kSameSide)) {
      v.*rank = vs[order[i - 1]].*rank;
    } else {
      v.*rank = static_cast<int>(i) + 1;
      tie_start = v.*x;
    }
  }
}

// The ops that make the two variants' ratios differ between the runtimes (see the header).
std::vector<OpDifference> ops_behind(const RankedVariant& v, const RankedVariant& o, double typical,
                                     const RuntimeNames& names) {
  const double disagreement = std::log(v.peer_x / o.peer_x) - std::log(v.ours_x / o.ours_x);
  const double direction = disagreement >= 0 ? 1.0 : -1.0;
  std::vector<OpDifference> found;
  for (const RankedVariant* r : {&v, &o}) {
    const double sign = r == &v ? direction : -direction;
    for (const auto& [op, entry] : r->ours->op_times.items()) {
      if (!r->peer->op_times.contains(op) || !not_comparable(*r->ours, *r->peer, op, names).empty()) continue;
      const std::optional<double> a = op_headline_ms(*r->ours, op), b = op_headline_ms(*r->peer, op);
      if (!a || !b) continue;
      const double weight = sign * (*b - typical * *a) / r->peer_ms;
      if (weight > 0) found.push_back({r->variant, op, *a, *b, weight});
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const OpDifference& a, const OpDifference& b) { return a.weight > b.weight; });
  double total = 0;
  for (const OpDifference& d : found) total += d.weight;
  std::vector<OpDifference> named;
  double covered = 0;
  for (const OpDifference& d : found) {
    if (named.size() == kMaxOpsNamed || covered >= kExplainedShare * total) break;
    named.push_back(d);
    covered += d.weight;
  }
  return named;
}

Disagreement disagreement(const RankedVariant& v, const RankedVariant& o, bool side, double typical,
                          const RuntimeNames& names) {
  Disagreement d{v.variant, o.variant, side, {}, {}};
  const bool ours_have = has_op_times(*v.ours) && has_op_times(*o.ours);
  const bool peer_have = has_op_times(*v.peer) && has_op_times(*o.peer);
  if (!ours_have) d.without_op_times.push_back(names.ours);
  if (!peer_have) d.without_op_times.push_back(names.peer);
  if (ours_have && peer_have) d.ops = ops_behind(v, o, typical, names);
  return d;
}

void find_disagreements(RankingVerdict& verdict, const RuntimeNames& names) {
  const std::vector<RankedVariant>& vs = verdict.variants;
  const RankedVariant* base = nullptr;
  for (const RankedVariant& v : vs)
    if (v.is_baseline) base = &v;
  std::set<std::string> on_other_side;
  for (const RankedVariant& v : vs) {
    if (v.is_baseline) continue;
    // Sides that differ by ratios within a tie of each other (0.94x and 0.96x) are no disagreement.
    const bool apart = std::max(v.ours_x, v.peer_x) > std::min(v.ours_x, v.peer_x) * (1.0 + kSameSide);
    if (side_of(v.ours_x) != side_of(v.peer_x) && apart) {
      verdict.disagreements.push_back(disagreement(v, *base, true, verdict.typical_ratio, names));
      on_other_side.insert(v.variant);
    }
  }
  // Two variants ranked the other way round, each beyond a tie, that the sides do not explain.
  for (size_t i = 0; i < vs.size(); ++i)
    for (size_t j = i + 1; j < vs.size(); ++j) {
      const RankedVariant& a = vs[i];
      const RankedVariant& b = vs[j];
      if (a.is_baseline || b.is_baseline || on_other_side.count(a.variant) || on_other_side.count(b.variant)) continue;
      const bool ours_a_first = a.ours_x * (1.0 + kSameSide) < b.ours_x;
      const bool ours_b_first = b.ours_x * (1.0 + kSameSide) < a.ours_x;
      const bool peer_a_first = a.peer_x * (1.0 + kSameSide) < b.peer_x;
      const bool peer_b_first = b.peer_x * (1.0 + kSameSide) < a.peer_x;
      if (ours_a_first && peer_b_first)
        verdict.disagreements.push_back(disagreement(a, b, false, verdict.typical_ratio, names));
      else if (ours_b_first && peer_a_first)
        verdict.disagreements.push_back(disagreement(b, a, false, verdict.typical_ratio, names));
    }
}

void match_op_names(RankingVerdict& verdict, const RuntimeNames& names) {
  for (const RankedVariant& v : verdict.variants) {
    const bool ours_have = has_op_times(*v.ours), peer_have = has_op_times(*v.peer);
    verdict.any_op_times = verdict.any_op_times || ours_have || peer_have;
    if (!ours_have || !peer_have) continue;
    ++verdict.rows_with_op_times;
    for (const auto& [op, entry] : v.ours->op_times.items()) {
      if (!v.peer->op_times.contains(op)) {
        verdict.ops_only_in_ours.push_back(v.variant + ": " + op);
      } else if (const std::string why = not_comparable(*v.ours, *v.peer, op, names); !why.empty()) {
        verdict.ops_not_comparable.push_back(v.variant + ": " + op + ": " + why);
      } else {
        ++verdict.ops_matched;
      }
    }
    for (const auto& [op, entry] : v.peer->op_times.items())
      if (!v.ours->op_times.contains(op)) verdict.ops_only_in_peer.push_back(v.variant + ": " + op);
  }
}

RankingVerdict judge_group(const std::vector<RowPair>& group, const RuntimeNames& names) {
  RankingVerdict verdict;
  verdict.block = group.front().left->block;
  verdict.point_label = group.front().left->point_label;
  verdict.training = is_training(*group.front().left);
  const RowPair* base = &group.front();
  for (const RowPair& p : group)
    if (p.left->is_baseline) base = &p;
  verdict.baseline = base->left->variant;
  for (const RowPair& p : group) {
    if (!timed(p.left) || !timed(p.right)) {
      verdict.unranked.push_back(
          p.left->variant + " (" +
          (timed(p.left) ? names.peer + ": " + why_untimed(*p.right) : names.ours + ": " + why_untimed(*p.left)) + ")");
      continue;
    }
    RankedVariant v;
    v.variant = p.left->variant;
    v.ours = p.left;
    v.peer = p.right;
    v.ours_ms = headline_time(*p.left)->median;
    v.peer_ms = headline_time(*p.right)->median;
    v.is_baseline = &p == base;
    verdict.variants.push_back(v);
  }
  const auto base_it = std::find_if(verdict.variants.begin(), verdict.variants.end(),
                                    [](const RankedVariant& v) { return v.is_baseline; });
  if (base_it == verdict.variants.end()) {
    verdict.nothing_because = "the baseline, " + verdict.baseline + ", has no time on both sides";
    verdict.variants.clear();
    return verdict;
  }
  if (verdict.variants.size() < 2) {
    verdict.nothing_because = "no variant but the baseline has a time on both sides";
    return verdict;
  }
  const double base_ours = base_it->ours_ms, base_peer = base_it->peer_ms;
  std::vector<double> ratios;
  for (RankedVariant& v : verdict.variants) {
    v.ours_x = v.ours_ms / base_ours;
    v.peer_x = v.peer_ms / base_peer;
    ratios.push_back(v.peer_ms / v.ours_ms);
    for (const auto& [row, name] : {std::pair{v.ours, names.ours}, std::pair{v.peer, names.peer}}) {
      const Trust t = assess_trust(*row).level;
      if (t != Trust::ok) verdict.untrusted.push_back(v.variant + " in " + name + ": " + to_string(t));
    }
  }
  verdict.typical_ratio = median_of(ratios);
  assign_ranks(verdict.variants, &RankedVariant::ours_x, &RankedVariant::ours_rank);
  assign_ranks(verdict.variants, &RankedVariant::peer_x, &RankedVariant::peer_rank);
  match_op_names(verdict, names);
  if (!verdict.untrusted.empty()) {
    verdict.status = RankingStatus::not_concluded;
    return verdict;
  }
  find_disagreements(verdict, names);
  verdict.status = verdict.disagreements.empty() ? RankingStatus::agree : RankingStatus::disagree;
  return verdict;
}

const RankedVariant& find_variant(const RankingVerdict& v, const std::string& name) {
  return *std::find_if(v.variants.begin(), v.variants.end(), [&](const RankedVariant& r) { return r.variant == name; });
}

std::string disagreement_summary(const Disagreement& d, const RankingVerdict& v, const RuntimeNames& names) {
  const RankedVariant& a = find_variant(v, d.variant);
  if (d.side)
    return d.variant + " is " + side_phrase(side_of(a.ours_x), "the baseline (" + v.baseline + ")") + " on " +
           names.ours + ", " + side_phrase(side_of(a.peer_x), "it") + " on " + names.peer;
  return d.variant + " ranks ahead of " + d.other + " on " + names.ours + " and behind it on " + names.peer;
}

std::string disagreement_detail(const Disagreement& d, const RankingVerdict& v, const RuntimeNames& names) {
  const RankedVariant& a = find_variant(v, d.variant);
  const RankedVariant& b = find_variant(v, d.other);
  std::string s = d.side ? d.variant + ": " + names.ours + " " + format_ratio(a.ours_x) + " the baseline, " +
                               names.peer + " " + format_ratio(a.peer_x)
                         : d.variant + " against " + d.other + ": " + names.ours + " " + format_ratio(a.ours_x) +
                               " and " + format_ratio(b.ours_x) + " the baseline, " + names.peer + " " +
                               format_ratio(a.peer_x) + " and " + format_ratio(b.peer_x);
  if (!d.without_op_times.empty())
    return s + "; which ops make the difference needs per-op times of both variants from both runtimes (" +
           join(d.without_op_times, " and ") +
           " gave none): run `convbench compare SPEC --peer torch --per-op 3`, or both engines with --per-op N.";
  if (d.ops.empty())
    return s + "; no op's time explains it: the difference lies outside the ops (the runtimes' work between ops).";
  std::vector<std::string> ops;
  for (const OpDifference& o : d.ops)
    ops.push_back(o.op + " of " + o.variant + ": " + ms_text(o.ours_ms) + " in " + names.ours + ", " +
                  ms_text(o.peer_ms) + " in " + names.peer + ", " + format_ratio(o.peer_ms / o.ours_ms));
  return s + "; the difference is " + join(ops, "; ") + ", where the rows' typical " + names.peer + " / " + names.ours +
         " is " + format_ratio(v.typical_ratio) + ": the runtimes' kernels for " +
         (d.ops.size() == 1 ? "this op" : "these ops") + ", not the block's design, set this ranking.";
}

std::string op_names_sentence(const RankingVerdict& v, const RuntimeNames& names) {
  if (v.rows_with_op_times == 0) {
    bool ours = false;
    for (const RankedVariant& r : v.variants) ours = ours || has_op_times(*r.ours);
    return "per-op times: only " + (ours ? names.ours : names.peer) +
           "'s rows have them; give both engines --per-op N to compare the ops.";
  }
  if (v.ops_only_in_ours.empty() && v.ops_only_in_peer.empty() && v.ops_not_comparable.empty())
    return "op names: all " + std::to_string(v.ops_matched) + " ops of " + std::to_string(v.rows_with_op_times) +
           (v.rows_with_op_times == 1 ? " variant" : " variants") + " are timed by both runtimes under the same names.";
  std::vector<std::string> parts;
  if (!v.ops_only_in_ours.empty())
    parts.push_back("timed by " + names.ours + " only: " + join(v.ops_only_in_ours, ", "));
  if (!v.ops_only_in_peer.empty())
    parts.push_back("timed by " + names.peer + " only: " + join(v.ops_only_in_peer, ", "));
  if (!v.ops_not_comparable.empty()) parts.push_back("not comparable: " + join(v.ops_not_comparable, ", "));
  return "op names: " + std::to_string(v.ops_matched) + " ops matched; " + join(parts, "; ") + ".";
}

}  // namespace

std::string to_string(Side s) {
  switch (s) {
    case Side::faster: return "faster";
    case Side::slower: return "slower";
    case Side::same: break;
  }
  return "same";
}

Side side_of(double ratio) {
  if (ratio < 1.0 - kSameSide) return Side::faster;
  if (ratio > 1.0 + kSameSide) return Side::slower;
  return Side::same;
}

std::vector<RankingVerdict> rank_runtimes(const std::vector<RowPair>& pairs, const RuntimeNames& names) {
  std::vector<std::vector<RowPair>> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const RowPair& p : pairs) {
    const auto key = std::make_pair(p.left->block, p.left->point_label);
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(p);
  }
  std::vector<RankingVerdict> verdicts;
  for (const std::vector<RowPair>& group : groups) {
    const bool any_timed =
        std::any_of(group.begin(), group.end(), [](const RowPair& p) { return timed(p.left) || timed(p.right); });
    if (any_timed) verdicts.push_back(judge_group(group, names));
  }
  return verdicts;
}

std::vector<std::string> verdict_sentences(const RankingVerdict& v, const RuntimeNames& names) {
  std::vector<std::string> out;
  const std::string both = names.ours + " and " + names.peer;
  switch (v.status) {
    case RankingStatus::nothing_to_rank: out.push_back("verdict: nothing to rank: " + v.nothing_because + "."); break;
    case RankingStatus::not_concluded:
      out.push_back("verdict: not concluded: the times of " + std::to_string(v.untrusted.size()) +
                    (v.untrusted.size() == 1 ? " row are" : " rows are") + " not to be trusted (" +
                    join(v.untrusted, "; ") + "); rerun on an idle machine before reading a ranking into them.");
      break;
    case RankingStatus::agree:
      out.push_back("verdict: " + both +
                    " agree: no two variants are ranked the other way round, and every variant is on the same side "
                    "of the baseline, " +
                    v.baseline + " (differences under " + format_fixed(kSameSide * 100.0, 0) + "% count as ties).");
      break;
    case RankingStatus::disagree: {
      std::vector<std::string> what;
      for (const Disagreement& d : v.disagreements) what.push_back(disagreement_summary(d, v, names));
      out.push_back("verdict: " + both + " disagree: " + join(what, "; ") + ".");
      for (const Disagreement& d : v.disagreements) out.push_back(disagreement_detail(d, v, names));
      break;
    }
  }
  if (!v.unranked.empty()) out.push_back("not ranked (no time on one side): " + join(v.unranked, ", ") + ".");
  if (v.any_op_times) out.push_back(op_names_sentence(v, names));
  return out;
}

std::string rankings_summary(const std::vector<RankingVerdict>& verdicts) {
  int agree = 0, disagree = 0, open = 0;
  std::vector<std::string> where;
  for (const RankingVerdict& v : verdicts) {
    agree += v.status == RankingStatus::agree;
    open += v.status == RankingStatus::not_concluded || v.status == RankingStatus::nothing_to_rank;
    if (v.status == RankingStatus::disagree) {
      ++disagree;
      where.push_back(v.block + (v.point_label.empty() ? "" : " [" + v.point_label + "]"));
    }
  }
  return "Rankings by time: " + std::to_string(agree) + " of " + std::to_string(verdicts.size()) +
         " block points agree, " + std::to_string(disagree) + " disagree" +
         (where.empty() ? "" : " (" + join(where, ", ") + ")") + ", " + std::to_string(open) + " not concluded.";
}

}  // namespace convbench

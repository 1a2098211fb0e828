#include "report/advice_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "report/result_columns.hpp"
#include "results/runtime_names.hpp"
#include "results/trust.hpp"
#include "util/json_text.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

// A try's time over its rounds: the geometric mean of the rounds' medians and the largest noise.
struct RoundsTime {
  double median_ms = 0;
  double noise = 0;
  bool any = false;
};

RoundsTime rounds_time(const AdviceTry& t) {
  RoundsTime out;
  double log_sum = 0;
  int n = 0;
  for (const ResultRow& r : t.rounds) {
    const std::optional<TimeStats>& s = headline_time(r);
    if (!ran(r) || !s || s->median <= 0) continue;
    log_sum += std::log(s->median);
    out.noise = std::max(out.noise, s->noise);
    ++n;
  }
  if (n > 0) {
    out.median_ms = std::exp(log_sum / n);
    out.any = true;
  }
  return out;
}

std::string time_cell_of(const AdviceTry& t) {
  const RoundsTime r = rounds_time(t);
  if (!r.any) return "-";
  return format_fixed(r.median_ms, 3) + " ±" + format_fixed(r.noise * 100.0, 1) + "%";
}

bool training(const AdviceSubject& s) { return s.mode == "train"; }

// A note as a sentence: its first letter capitalised, unless it starts with a name from the spec
// or the code (inplace_abn, leaky_relu), which keeps its spelling.
std::string sentence_case(std::string text) {
  const std::string first_word = text.substr(0, text.find_first_of(" :,"));
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z' && first_word.find('_') == std::string::npos)
    text[0] = static_cast<char>(text[0] - 'a' + 'A');
  return text;
}

std::string subject_title(const Advice& advice, const AdviceSubject& s) {
  std::string title = s.block + (s.point_label.empty() ? "" : " [" + s.point_label + "]") + " / " + s.variant;
  title += ": " + s.mode + ", device " + s.device;
  if (s.original.threads > 0)
    title += ", " + std::to_string(s.original.threads) + (s.original.threads == 1 ? " thread" : " threads");
  title += advice.timed ? ", " + std::to_string(advice.rounds) + (advice.rounds == 1 ? " round" : " rounds")
                        : ", memory only";
  return title;
}

int64_t saved_bytes(const AdviceTry& t) {
  const MemoryFigures* m = advice_memory(t);
  return m ? m->saved_bytes : 0;
}

// What made the peak move: the memory categories at the moment of each peak that differ most
// (at most three), e.g. "; at the peak, workspace 6.06 MiB -> 0 B, saved 9.00 MiB -> 12.00 MiB".
std::string at_peak_change(const AdviceTry& original, const AdviceTry& t) {
  const MemoryFigures* a = advice_memory(original);
  const MemoryFigures* b = advice_memory(t);
  if (!a || !b) return "";
  std::vector<int> moved;
  for (int c = 0; c < kMemoryCategoryCount; ++c)
    if (a->at_peak[c] != b->at_peak[c]) moved.push_back(c);
  std::stable_sort(moved.begin(), moved.end(), [&](int x, int y) {
    return std::llabs(b->at_peak[x] - a->at_peak[x]) > std::llabs(b->at_peak[y] - a->at_peak[y]);
  });
  if (moved.size() > 3) moved.resize(3);
  std::string out;
  for (int c : moved)
    out += (out.empty() ? "; at the peak, " : ", ") + std::string(to_string(static_cast<MemoryCategory>(c))) + " " +
           format_bytes(a->at_peak[c]) + " -> " + format_bytes(b->at_peak[c]);
  return out;
}

std::string ratios_text(const std::vector<double>& ratios) {
  std::string out;
  for (double r : ratios) out += (out.empty() ? "" : ", ") + format_ratio(r);
  return out;
}

// The evidence of one try, as sentences.
std::vector<std::string> evidence(const Advice& advice, const AdviceSubject& s, const AdviceTry& t,
                                  const AdviceJudgement& j) {
  std::vector<std::string> out;
  if (!t.note.empty()) out.push_back(sentence_case(t.note) + ".");
  if (advice.timed && !j.round_ratios.empty())
    out.push_back(std::string(training(s) ? "Step" : "Forward") + " time " + ratios_text(j.round_ratios) +
                  " of the original's, round by round" +
                  (j.time == Verdict::ambiguous ? ": the rounds or the samples' quartiles do not agree" : "") + ".");
  if (!j.time_note.empty()) out.push_back("Time " + j.time_note + ".");
  if (j.peak_ratio && j.memory != Verdict::same) {
    // What a training step keeps for backward, when the change moved it; else the peak moved
    // through something else (a workspace, a conversion's copy).
    const int64_t saved_before = saved_bytes(s.original), saved_after = saved_bytes(t);
    out.push_back(
        "Peak " + format_bytes(j.original_peak_bytes) + " -> " + format_bytes(j.peak_bytes) +
        at_peak_change(s.original, t) +
        (training(s) && saved_before != saved_after
             ? "; saved for backward in all " + format_bytes(saved_before) + " -> " + format_bytes(saved_after)
             : "") +
        ".");
  }
  for (const ResultRow& r : t.rounds)
    if (r.fold) {
      const FoldFacts& f = *r.fold;
      std::string proof = "Proven equal to " + f.source + " (output error " + format_significant(f.output_error, 2);
      if (f.gradient_error >= 0) proof += ", gradients " + format_significant(f.gradient_error, 2);
      out.push_back("Folds " + std::to_string(f.source_ops) + " ops into " + std::to_string(f.ops) + " (" +
                    std::to_string(f.convs.size()) + (f.convs.size() == 1 ? " folded conv" : " folded convs") + "). " +
                    proof + ").");
      break;
    }
  return out;
}

std::string where_text(const AdviceTry& t) {
  return t.where == "command line" ? "On the command line" : "In " + t.where;
}

// A ranked try as the renderers read it: the try and its judgement.
struct ShownTry {
  const AdviceTry* t;
  AdviceJudgement j;
};

std::vector<ShownTry> ranked_tries(const Advice& advice, const AdviceSubject& s) {
  std::vector<ShownTry> out;
  for (RankedTry& r : advice_ranking(advice, s)) out.push_back({&s.tried[r.index], std::move(r.judgement)});
  return out;
}

TextTable subject_table(const Advice& advice, const AdviceSubject& s, const std::vector<ShownTry>& ranked) {
  TextTable table;
  const std::string phase = training(s) ? "step" : "fwd";
  table.header = {"#", "change"};
  table.right_aligned = {true, false};
  if (advice.timed) {
    table.header.insert(table.header.end(), {phase + " ms", phase + " x"});
    table.right_aligned.insert(table.right_aligned.end(), {true, true});
  }
  table.header.insert(table.header.end(), {"peak", "peak x", "outcome"});
  table.right_aligned.insert(table.right_aligned.end(), {true, true, false});
  const int64_t original_peak = advice_peak(s.original);
  for (size_t k = 0; k < ranked.size(); ++k) {
    const ShownTry& r = ranked[k];
    std::vector<std::string> row = {std::to_string(k + 1), r.t->change};
    std::vector<Tone> tones = {Tone::plain, Tone::plain};
    if (advice.timed) {
      row.push_back(time_cell_of(*r.t));
      row.push_back(r.j.time_ratio ? format_ratio(*r.j.time_ratio) : "-");
      tones.push_back(Tone::plain);
      tones.push_back(r.j.time == Verdict::faster   ? Tone::better
                      : r.j.time == Verdict::slower ? Tone::worse
                                                    : Tone::plain);
    }
    const bool ran_all = r.j.rank_group != static_cast<int>(advice_rank_groups().size()) - 1;
    row.push_back(ran_all ? format_bytes(r.j.peak_bytes) : "-");
    row.push_back(ran_all && r.j.peak_ratio ? format_ratio(*r.j.peak_ratio) : "-");
    tones.push_back(Tone::plain);
    tones.push_back(r.j.memory == Verdict::less   ? Tone::better
                    : r.j.memory == Verdict::more ? Tone::worse
                                                  : Tone::plain);
    row.push_back(r.j.outcome);
    tones.push_back(Tone::plain);
    table.rows.push_back(row);
    table.tones.push_back(tones);
  }
  std::vector<std::string> last = {"-", s.original.change};
  if (advice.timed) {
    last.push_back(time_cell_of(s.original));
    last.push_back(rounds_time(s.original).any ? "1.00x" : "-");
  }
  last.push_back(original_peak > 0 ? format_bytes(original_peak) : "-");
  last.push_back(original_peak > 0 ? "1.00x" : "-");
  bool failed = false;
  for (const ResultRow& r : s.original.rounds) failed = failed || !ran(r);
  last.push_back(failed ? "failed" : "the reference");
  table.rows.push_back(last);
  return table;
}

// A change worth making: it buys time or memory (rank groups faster, leaner, trade-off).
bool worth_saying(const AdviceJudgement& j) { return j.rank_group <= 2; }

std::string not_tried_text(const AdviceSubject& s) {
  std::string out;
  for (const auto& [change, why] : s.not_tried) out += (out.empty() ? "" : "; ") + change + " (" + why + ")";
  return out;
}

std::string columns_note(const Advice& advice, const AdviceSubject& s) {
  std::string note;
  if (advice.timed)
    note +=
        "ms: the geometric mean of the rounds' medians, ± the largest noise of a round. x: against the variant "
        "as written, round by round (" +
        std::string(training(s) ? "step" : "forward") + " time; " + format_fixed(advice.time_threshold * 100, 0) +
        "% and separate quartiles in every round to count). ";
  note += "peak: measured when the row has it, else predicted (" + format_fixed(advice.memory_threshold * 100, 0) +
          "% to count).";
  // A speed is a fact about a runtime: the reader trains with another one.
  if (advice.timed)
    note += " The times are measured on " + runtime_phrase(advice.engine, advice.device) +
            "; the runtime you train with may rank these changes otherwise (compare --peer torch runs PyTorch "
            "beside it).";
  return note;
}

}  // namespace

std::string advice_text(const Advice& advice) {
  std::ostringstream out;
  bool first = true;
  for (const AdviceSubject& s : advice.subjects) {
    if (!first) out << "\n";
    first = false;
    out << printable(subject_title(advice, s)) << "\n";
    const std::vector<ShownTry> ranked = ranked_tries(advice, s);
    out << subject_table(advice, s, ranked).render_terminal();
    out << columns_note(advice, s) << "\n";
    bool any = false;
    for (size_t k = 0; k < ranked.size(); ++k) {
      const ShownTry& r = ranked[k];
      if (!worth_saying(r.j)) continue;
      if (!any) out << "\nWhat each change buys, and how to make it:\n";
      any = true;
      out << k + 1 << ". " << r.t->change << ": " << r.j.outcome << ". " << where_text(*r.t) << ":\n";
      for (const std::string& line : r.t->lines) out << "     " << printable(line) << "\n";
      for (const std::string& sentence : evidence(advice, s, *r.t, r.j)) out << "   " << printable(sentence) << "\n";
    }
    if (!any) out << "\nNo change tried buys time or memory against " << printable(s.variant) << " as written.\n";
    if (!s.not_tried.empty()) out << "Not tried: " << printable(not_tried_text(s)) << ".\n";
    for (const std::string& w : s.warnings) out << "warning: " << printable(w) << "\n";
  }
  return out.str();
}

std::string advice_markdown(const Advice& advice) {
  std::ostringstream out;
  out << "# What to try\n";
  for (const AdviceSubject& s : advice.subjects) {
    out << "\n## " << markdown_escape(subject_title(advice, s)) << "\n\n";
    const std::vector<ShownTry> ranked = ranked_tries(advice, s);
    out << subject_table(advice, s, ranked).render_markdown() << "\n"
        << markdown_escape(columns_note(advice, s)) << "\n";
    bool any = false;
    for (size_t k = 0; k < ranked.size(); ++k) {
      const ShownTry& r = ranked[k];
      if (!worth_saying(r.j)) continue;
      if (!any) out << "\n";
      any = true;
      out << k + 1 << ". **" << markdown_escape(r.t->change) << "**: " << markdown_escape(r.j.outcome) << ". "
          << markdown_escape(where_text(*r.t)) << ":\n\n   ```\n";
      for (const std::string& line : r.t->lines) out << "   " << line << "\n";
      out << "   ```\n\n";
      for (const std::string& sentence : evidence(advice, s, *r.t, r.j))
        out << "   " << markdown_escape(sentence) << "\n";
    }
    if (!any) out << "\nNo change tried buys time or memory against " << markdown_escape(s.variant) << " as written.\n";
    if (!s.not_tried.empty()) out << "\nNot tried: " << markdown_escape(not_tried_text(s)) << ".\n";
    for (const std::string& w : s.warnings) out << "\n**Warning:** " << markdown_escape(w) << "\n";
  }
  return out.str();
}

nlohmann::ordered_json advice_json(const Advice& advice) {
  using J = nlohmann::ordered_json;
  const auto rounds_json = [](const AdviceTry& t) {
    J rounds = J::array();
    for (const ResultRow& r : t.rounds) {
      J round = {{"status", to_string(r.status)}};
      if (!r.message.empty()) round["message"] = r.message;
      if (const std::optional<TimeStats>& s = headline_time(r); ran(r) && s) {
        round["median_ms"] = s->median;
        round["noise"] = s->noise;
        const TrustAssessment trust = assess_trust(r);
        round["trust"] = to_string(trust.level);
        if (!trust.evidence.empty()) round["evidence"] = evidence_text(trust);
      }
      if (has_measured_peak(r)) round["peak_bytes"] = r.measured->peak_bytes;
      round["predicted_peak_bytes"] = r.predicted.peak_bytes;
      round["graph_hash"] = r.graph_hash;
      rounds.push_back(round);
    }
    return rounds;
  };
  const auto try_json = [&](const AdviceTry& t) {
    J j = {{"change", t.change}, {"category", t.category}, {"where", t.where}, {"lines", t.lines}};
    if (!t.note.empty()) j["note"] = t.note;
    if (t.threads > 0) j["threads"] = t.threads;
    if (!t.rounds.empty() && !t.rounds.front().structure.empty()) j["structure"] = t.rounds.front().structure;
    j["rounds"] = rounds_json(t);
    return j;
  };
  J subjects = J::array();
  for (const AdviceSubject& s : advice.subjects) {
    J ranked = J::array();
    int rank = 0;
    for (const ShownTry& r : ranked_tries(advice, s)) {
      J j = {{"rank", ++rank}};
      j.update(try_json(*r.t));
      j["outcome"] = r.j.outcome;
      j["rank_group"] = advice_rank_groups()[static_cast<size_t>(r.j.rank_group)];
      j["time_verdict"] = to_string(r.j.time);
      if (r.j.time_ratio) j["time_ratio"] = *r.j.time_ratio;
      j["round_ratios"] = r.j.round_ratios;
      if (!r.j.time_note.empty()) j["time_note"] = r.j.time_note;
      j["memory_verdict"] = to_string(r.j.memory);
      j["peak_bytes"] = r.j.peak_bytes;
      if (r.j.peak_ratio) j["peak_ratio"] = *r.j.peak_ratio;
      ranked.push_back(j);
    }
    J not_tried = J::array();
    for (const auto& [change, why] : s.not_tried) not_tried.push_back({{"change", change}, {"why", why}});
    subjects.push_back({{"block", s.block},
                        {"point_label", s.point_label},
                        {"variant", s.variant},
                        {"variant_key", s.variant_key},
                        {"mode", s.mode},
                        {"device", s.device},
                        {"original", try_json(s.original)},
                        {"ranked", ranked},
                        {"not_tried", not_tried},
                        {"warnings", s.warnings}});
  }
  return J{{"schema", kAdviceSchema},
           {"engine", advice.engine},
           {"device", advice.device},
           {"rounds", advice.rounds},
           {"timed", advice.timed},
           {"time_threshold", advice.time_threshold},
           {"memory_threshold", advice.memory_threshold},
           {"provenance", J::parse(json_text(advice.provenance))},
           {"subjects", subjects}};
}

}  // namespace convbench

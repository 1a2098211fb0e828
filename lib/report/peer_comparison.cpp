#include "report/peer_comparison.hpp"

#include <map>
#include <set>

#include "report/flop_counters_table.hpp"
#include "report/result_columns.hpp"
#include "results/runtime_names.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

constexpr const char* kCountersNote =
    "its rule predicts: the counter's number computed from convbench's MACs and the ops' element counts by the "
    "counter's documented rule (scripts/peer/counters.py, scripts/README.md, \"The FLOP counters side by side\"); "
    "BROKEN: the "
    "counter no longer gives its explained number.";

bool has_counts(const ResultRow& r) {
  return r.status == RunStatus::ok || r.params != 0 || r.macs.forward != 0 || r.macs.backward() != 0;
}

std::optional<double> time_ratio(const ResultRow& ours, const ResultRow& peer,
                                 const std::optional<TimeStats> ResultRow::*phase) {
  const auto& a = ours.*phase;
  const auto& b = peer.*phase;
  if (ours.status != RunStatus::ok || peer.status != RunStatus::ok || !a || !b || b->median <= 0) return std::nullopt;
  return a->median / b->median;
}

void compare_memory(PeerRow& row) {
  const ResultRow& ours = *row.ours;
  const ResultRow& peer = *row.peer;
  if (peer.status != RunStatus::ok || !peer.measured) return;
  if (has_measured_peak(ours) && peer.measured->peak_bytes >= 0) {
    row.memory_measure = MemoryMeasure::peak;
    row.ours_memory = ours.measured->peak_bytes;
    row.peer_memory = peer.measured->peak_bytes;
  } else if (ours.measured && ours.status == RunStatus::ok) {
    row.memory_measure = MemoryMeasure::saved_measured;
    row.ours_memory = ours.measured->saved_bytes;
    row.peer_memory = peer.measured->saved_bytes;
  } else if (ours.device.empty()) {
    row.memory_measure = MemoryMeasure::saved_predicted;
    row.ours_memory = ours.predicted.saved_bytes;
    row.peer_memory = peer.measured->saved_bytes;
  } else {
    return;
  }
  if (row.peer_memory > 0) row.memory = static_cast<double>(row.ours_memory) / static_cast<double>(row.peer_memory);
}

PeerRow pair_rows(const ResultRow& ours, const ResultRow& peer) {
  PeerRow row;
  row.key = key_of(ours);
  row.ours = &ours;
  row.peer = &peer;
  row.counts_known = has_counts(ours) && has_counts(peer);
  if (row.counts_known)
    row.counts = {{"params", ours.params, peer.params},
                  {"MACs fwd", ours.macs.forward, peer.macs.forward},
                  {"MACs bwd-data", ours.macs.backward_data, peer.macs.backward_data},
                  {"MACs bwd-weight", ours.macs.backward_weight, peer.macs.backward_weight}};
  row.forward = time_ratio(ours, peer, &ResultRow::forward);
  row.backward = time_ratio(ours, peer, &ResultRow::backward);
  row.step = time_ratio(ours, peer, &ResultRow::step);
  compare_memory(row);
  return row;
}

std::string ratio_cell(const std::optional<double>& x) { return x ? format_ratio(*x) : "-"; }

std::string median_cell(const ResultRow& r, const std::optional<TimeStats>& t) {
  return r.status == RunStatus::ok && t ? format_fixed(t->median, 3) : "-";
}

std::string bytes_cell(MemoryMeasure m, int64_t bytes) { return m == MemoryMeasure::none ? "-" : format_bytes(bytes); }

// As the main table's status column says it: a row whose times cannot be trusted says why.
std::string status_cell(const ResultRow& r) {
  if (r.device.empty()) return "not run";
  if (r.status == RunStatus::ok) return to_string(r.status) + trust_suffix(r);
  return to_string(r.status) + (r.message.empty() ? "" : ": " + r.message);
}

struct PeerBlockTables {
  std::string title;
  TextTable counts, times;
  const RankingVerdict* ranking = nullptr;  // none for rows without times
};

// "by step time (...)": "ranking " before it on a terminal, "Ranking " in Markdown, under an HTML heading.
std::string ranking_title(const RankingVerdict& v) {
  return std::string("by ") + (v.training ? "step" : "forward") + " time (rank 1 = fastest, tied within " +
         format_fixed(kSameSide * 100.0, 0) + "%; x: over the baseline, " + v.baseline + ", in the same runtime)";
}

TextTable ranking_table(const RankingVerdict& v) {
  TextTable t;
  t.header = {"variant", "rank ours", "x ours", "rank peer", "x peer"};
  t.right_aligned = {false, true, true, true, true};
  for (const RankedVariant& r : v.variants) {
    t.rows.push_back({r.variant + (r.is_baseline ? " (base)" : ""), std::to_string(r.ours_rank), format_ratio(r.ours_x),
                      std::to_string(r.peer_rank), format_ratio(r.peer_x)});
    t.tones.push_back({Tone::plain, Tone::plain, tone_of_ratio(r.ours_x), Tone::plain, tone_of_ratio(r.peer_x)});
  }
  return t;
}

std::vector<PeerBlockTables> peer_tables(const PeerComparison& c) {
  std::vector<PeerBlockTables> blocks;
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::map<std::pair<std::string, std::string>, const RankingVerdict*> rankings;
  for (const RankingVerdict& v : c.rankings) rankings[{v.block, v.point_label}] = &v;
  for (const PeerRow& row : c.rows) {
    const auto group = std::make_pair(row.key.block, row.key.point_label);
    auto it = index.find(group);
    if (it == index.end()) {
      PeerBlockTables b;
      if (const auto r = rankings.find(group); r != rankings.end()) b.ranking = r->second;
      b.title = row.key.block + (row.key.point_label.empty() ? "" : " [" + row.key.point_label + "]") + ": " +
                c.ours_engine + (c.ours_device.empty() ? "" : " (" + c.ours_device + ")") + " vs " + c.peer_engine +
                (c.peer_device.empty() ? "" : " (" + c.peer_device + ")");
      b.counts.header = {"variant",       "params ours",   "params peer",     "MACs fwd ours",   "MACs fwd peer",
                         "bwd-data ours", "bwd-data peer", "bwd-weight ours", "bwd-weight peer", "counts"};
      b.counts.right_aligned.assign(b.counts.header.size(), true);
      b.counts.right_aligned.front() = false;
      b.counts.right_aligned.back() = false;
      b.times.header = {"variant",     "fwd ms ours", "fwd ms peer",  "fwd x",        "bwd ms ours",
                        "bwd ms peer", "bwd x",       "step ms ours", "step ms peer", "step x",
                        "memory ours", "memory peer", "memory x",     "status ours",  "status peer"};
      b.times.right_aligned.assign(b.times.header.size(), true);
      b.times.right_aligned[0] = false;
      b.times.right_aligned[13] = false;
      b.times.right_aligned[14] = false;
      it = index.emplace(group, blocks.size()).first;
      blocks.push_back(std::move(b));
    }
    PeerBlockTables& b = blocks[it->second];
    std::vector<std::string> counts = {row.key.variant};
    std::vector<Tone> tones(b.counts.header.size(), Tone::plain);
    if (row.counts_known) {
      for (const CountCheck& check : row.counts) {
        if (!check.match()) tones[counts.size()] = tones[counts.size() + 1] = Tone::worse;
        counts.push_back(format_count(check.ours));
        counts.push_back(format_count(check.peer));
      }
      std::string verdict = row.mismatch() ? "MISMATCH:" : "ok";
      for (const CountCheck& check : row.counts)
        if (!check.match()) verdict += " " + check.name;
      if (row.mismatch()) tones.back() = Tone::worse;
      counts.push_back(verdict);
    } else {
      counts.resize(b.counts.header.size() - 1, "-");
      counts.push_back("not compared (no counts)");
    }
    b.counts.rows.push_back(std::move(counts));
    b.counts.tones.push_back(std::move(tones));

    const ResultRow& o = *row.ours;
    const ResultRow& p = *row.peer;
    b.times.rows.push_back(
        {row.key.variant, median_cell(o, o.forward), median_cell(p, p.forward), ratio_cell(row.forward),
         median_cell(o, o.backward), median_cell(p, p.backward), ratio_cell(row.backward), median_cell(o, o.step),
         median_cell(p, p.step), ratio_cell(row.step), bytes_cell(row.memory_measure, row.ours_memory),
         bytes_cell(row.memory_measure, row.peer_memory), ratio_cell(row.memory), status_cell(o), status_cell(p)});
  }
  return blocks;
}

std::vector<std::string> footnotes(const PeerComparison& c) {
  std::set<MemoryMeasure> used;
  for (const PeerRow& r : c.rows) used.insert(r.memory_measure);
  std::vector<std::string> notes = {
      "Counts must agree exactly: params (trainable parameters) and MACs per direction; any difference is a MISMATCH.",
      "x columns: ours / peer; times are medians in ms (below 1.00x convbench is faster)."};
  if (used.count(MemoryMeasure::peak))
    notes.push_back(
        "memory (peak): peak bytes of one step measured by both engines (convbench's allocator; the "
        "peer's torch.cuda.max_memory_allocated).");
  if (used.count(MemoryMeasure::saved_measured))
    notes.push_back(
        "memory (saved): bytes kept for backward at the end of forward, without the block input: "
        "convbench's allocator (measured) vs the tensors PyTorch's autograd saves (saved_tensors_hooks); "
        "the peer measured no peak (CPU).");
  if (used.count(MemoryMeasure::saved_predicted))
    notes.push_back(
        "memory (saved, ours predicted): the file of ours has no measurement, so convbench's predicted "
        "saved bytes are compared with what PyTorch's autograd saves, both without the block input.");
  if (used.count(MemoryMeasure::none) && used.size() == 1) notes.push_back("memory: not compared (no measurement).");
  return notes;
}

std::string summary(const PeerComparison& c) {
  const int n = c.mismatches();
  if (n > 0)
    return "MISMATCH: " + std::to_string(n) + " of " + std::to_string(c.rows.size()) +
           " rows have counts that differ (exit code 1).";
  int compared = 0;
  for (const PeerRow& r : c.rows) compared += r.counts_known;
  return "Counts agree on all " + std::to_string(compared) + " compared rows.";
}

}  // namespace

bool PeerRow::mismatch() const {
  for (const CountCheck& c : counts)
    if (!c.match()) return true;
  return false;
}

int PeerComparison::mismatches() const {
  int n = 0;
  for (const PeerRow& r : rows) n += r.mismatch();
  return n;
}

PeerComparison compare_with_peer(const ResultSet& ours, const ResultSet& peer) {
  PeerComparison c;
  c.ours_engine = ours.engine;
  c.peer_engine = peer.engine;
  c.ours_device = ours.device;
  c.peer_device = peer.device;
  RowPairing pairing = pair_rows_by_key(ours, peer);
  for (const RowPair& p : pairing.pairs) c.rows.push_back(pair_rows(*p.left, *p.right));
  c.only_in_ours = std::move(pairing.only_in_left);
  c.only_in_peer = std::move(pairing.only_in_right);
  // The engines' names ("convbench", "PyTorch"; the tables' titles say the devices), with the
  // devices where that alone tells them apart (two convbench files), else ours and peer.
  c.names = {engine_display_name(ours.engine), engine_display_name(peer.engine)};
  if (c.names.ours == c.names.peer)
    c.names = {runtime_label(ours.engine, ours.device), runtime_label(peer.engine, peer.device)};
  if (c.names.ours == c.names.peer) c.names = {"ours", "peer"};
  c.rankings = rank_runtimes(pairing.pairs, c.names);
  return c;
}

std::string format_peer_comparison(const PeerComparison& c, TableStyle style) {
  const bool md = style == TableStyle::markdown;
  std::string out;
  for (const PeerBlockTables& b : peer_tables(c)) {
    if (md) {
      out += "### " + markdown_escape(b.title) + "\n\nCounts\n\n" + b.counts.render_markdown() +
             "\nTime and memory\n\n" + b.times.render_markdown() + "\n";
    } else {
      out += printable(b.title) + "\ncounts\n" + b.counts.render_terminal() + "\ntime and memory\n" +
             b.times.render_terminal() + "\n";
    }
    if (b.ranking) {
      const RankingVerdict& v = *b.ranking;
      if (md) {
        out += "Ranking " + markdown_escape(ranking_title(v)) + "\n\n";
        if (!v.variants.empty()) out += ranking_table(v).render_markdown() + "\n";
        for (const std::string& s : verdict_sentences(v, c.names)) out += "- " + markdown_escape(s) + "\n";
      } else {
        out += "ranking " + printable(ranking_title(v)) + "\n";
        if (!v.variants.empty()) out += ranking_table(v).render_terminal();
        for (const std::string& s : verdict_sentences(v, c.names)) out += printable(s) + "\n";
      }
      out += "\n";
    }
  }
  if (const std::optional<TextTable> counters = flop_counters_table(c)) {
    const std::string title = "FLOP counters (the peer's --counters) against convbench's forward MACs";
    out += md ? "### " + markdown_escape(title) + "\n\n" + counters->render_markdown() + "\n"
              : printable(title) + "\n" + counters->render_terminal() + "\n";
    out += std::string(kCountersNote) + "\n\n";
  }
  auto shown = [md](const RowKey& k) { return md ? markdown_escape(k.text()) : printable(k.text()); };
  for (const RowKey& k : c.only_in_ours) out += std::string(md ? "- " : "") + "only in ours: " + shown(k) + "\n";
  for (const RowKey& k : c.only_in_peer) out += std::string(md ? "- " : "") + "only in peer: " + shown(k) + "\n";
  if (!c.only_in_ours.empty() || !c.only_in_peer.empty()) out += "\n";
  for (const std::string& note : footnotes(c)) out += note + "\n";
  out += (md && c.mismatches() > 0 ? "**" + summary(c) + "**" : summary(c)) + "\n";
  if (!c.rankings.empty())
    out += (md ? markdown_escape(rankings_summary(c.rankings)) : printable(rankings_summary(c.rankings))) + "\n";
  return out;
}

std::string peer_comparison_html(const PeerComparison& c) {
  std::string out = "<section class=\"against\" id=\"against\">\n<h2>Against " + html_escape(c.peer_engine) + "</h2>\n";
  out += std::string("<p class=\"") + (c.mismatches() > 0 ? "mismatch" : "agree") + "\">" + html_escape(summary(c)) +
         "</p>\n";
  if (!c.rankings.empty()) out += "<p class=\"rankings\">" + html_escape(rankings_summary(c.rankings)) + "</p>\n";
  for (const PeerBlockTables& b : peer_tables(c)) {
    out += "<h3>" + html_escape(b.title) + "</h3>\n<h4>Counts</h4>\n" + b.counts.render_html() +
           "<h4>Time and memory</h4>\n" + b.times.render_html();
    if (b.ranking) {
      const RankingVerdict& v = *b.ranking;
      out += "<h4>Ranking</h4>\n<p>" + html_escape("Variants " + ranking_title(v)) + "</p>\n";
      if (!v.variants.empty()) out += ranking_table(v).render_html();
      out += "<ul class=\"verdict\">\n";
      for (const std::string& s : verdict_sentences(v, c.names)) out += "<li>" + html_escape(s) + "</li>\n";
      out += "</ul>\n";
    }
  }
  if (!c.only_in_ours.empty() || !c.only_in_peer.empty()) {
    out += "<ul class=\"unpaired\">\n";
    for (const RowKey& k : c.only_in_ours) out += "<li>only in ours: " + html_escape(k.text()) + "</li>\n";
    for (const RowKey& k : c.only_in_peer) out += "<li>only in peer: " + html_escape(k.text()) + "</li>\n";
    out += "</ul>\n";
  }
  if (const std::optional<TextTable> counters = flop_counters_table(c))
    out += "<h3>FLOP counters (the peer's --counters) against convbench's forward MACs</h3>\n" +
           counters->render_html() + "<p>" + html_escape(kCountersNote) + "</p>\n";
  out += "<ul class=\"notes\">\n";
  for (const std::string& note : footnotes(c)) out += "<li>" + html_escape(note) + "</li>\n";
  return out + "</ul>\n</section>\n";
}

}  // namespace convbench

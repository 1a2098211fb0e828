#include "report/result_columns.hpp"

#include <algorithm>
#include <stdexcept>

#include "results/trust.hpp"
#include "util/markup_escape.hpp"

namespace convbench {
namespace {

// Notes shared word for word by the columns they describe (said once under a table).
const char* kGflopNote =
    "GFLOP: 2 x MACs plus elementwise work, of the forward pass (fwd), the backward pass (bwd) or one training step "
    "(step: both).";
const char* kGmacNote =
    "GMAC: the multiply-accumulates of convolutions alone (what many papers and posts call \"FLOPs\"; 1 MAC = 2 "
    "FLOP), of the pass its header names (fwd, bwd, step).";
const char* kRatioNote = "x columns: ratio to the baseline (base) at the same sweep point.";
const char* kTimeNote = "ms: the median of the samples; ± its relative noise (stdev/mean).";
const char* kPeakNote =
    "peak: peak bytes of one {pass} (pred. = convbench's memory model, meas. = the runtime's allocator; plain peak: "
    "measured when the row has it, else predicted).";
const char* kRateNote =
    "TFLOP/s, GB/s: achieved rates of the {phase}: its FLOPs, and the minimum bytes its ops move, over its median "
    "time.";

// A ratio to a baseline that has none of the quantity (a peer file without predictions) is "-".
std::string ratio_text(double value, double base) { return base > 0 ? format_ratio(value / base) : "-"; }
// LaTeX's header says ($\times$), so its cells carry the bare ratio.
std::string ratio_latex(double value, double base) { return base > 0 ? format_fixed(value / base, 2) : "--"; }

// The tone follows what the cell shows: a ratio that prints as 1.00x is neither.
Tone ratio_tone(double value) {
  if (format_fixed(value, 2) == "1.00") return Tone::plain;
  return value < 1.0 ? Tone::better : Tone::worse;
}

// Three significant digits: what a table in a paper can defend from a benchmark's noise.
std::string sig(double x) { return format_significant(x, 3); }

std::string median_latex(const ResultRow& r, const std::optional<TimeStats>& t) {
  return ran(r) && t ? sig(t->median) : "--";
}

std::string giga_latex(int64_t value) { return sig(static_cast<double>(value) * 1e-9); }
std::string mib_latex(int64_t bytes) { return sig(static_cast<double>(bytes) / 1048576.0); }

int64_t step_macs(const ResultRow& r) { return r.macs.forward + r.macs.backward(); }

// Achieved rate of the headline phase: `amount` per median second, in units of `unit`.
std::optional<double> rate(const ResultRow& r, int64_t amount, double unit) {
  const auto& t = headline_time(r);
  if (!ran(r) || !t || t->median <= 0 || amount <= 0) return std::nullopt;
  return static_cast<double>(amount) / (t->median * 1e-3) / unit;
}
std::string rate_text(const ResultRow& r, int64_t amount, double unit) {
  const auto v = rate(r, amount, unit);
  return v ? format_significant(*v, 3) : "-";
}
std::string rate_latex(const ResultRow& r, int64_t amount, double unit) {
  const auto v = rate(r, amount, unit);
  return v ? sig(*v) : "--";
}

std::optional<double> time_ratio(const ColumnContext& c) {
  const auto& mine = headline_time(c.row);
  const auto& theirs = headline_time(c.base);
  if (!ran(c.row) || !ran(c.base) || !mine || !theirs || theirs->median <= 0) return std::nullopt;
  return mine->median / theirs->median;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

SetPlace in(ColumnSet set, int order) { return SetPlace{.set = set, .order = order}; }

std::vector<ResultColumn> make_result_columns() {
  using C = const ColumnContext&;
  using N = ColumnNeeds;
  using S = ColumnSet;
  return {
      {.key = "params",
       .header_train = "params",
       .header_infer = "params",
       .latex_group = "Params",
       .sets = {in(S::compact_analysis, 1), in(S::latex_analysis, 1), in(S::latex_sweep, 1)},
       .text = [](C c) { return ColumnCell{format_count(c.row.params)}; },
       .latex = [](C c) { return format_count(c.row.params); }},
      {.key = "gflop_fwd",
       .header_train = "GFLOP fwd",
       .header_infer = "GFLOP fwd",
       .latex_group = "Forward cost",
       .latex_unit = "(GFLOP)",
       .note = kGflopNote,
       .sets = {in(S::compact_network, 7), in(S::compact_analysis, 2), in(S::latex_analysis, 2), in(S::latex_sweep, 2)},
       .text = [](C c) { return ColumnCell{format_giga(c.row.flops.forward)}; },
       .latex = [](C c) { return giga_latex(c.row.flops.forward); }},
      {.key = "gflop_bwd",
       .header_train = "GFLOP bwd",
       .header_infer = "GFLOP bwd",
       .latex_group = "Backward cost",
       .latex_unit = "(GFLOP)",
       .needs = N::train,
       .note = kGflopNote,
       .sets = {in(S::compact_analysis, 3)},
       .text = [](C c) { return ColumnCell{format_giga(c.row.flops.backward())}; },
       .latex = [](C c) { return giga_latex(c.row.flops.backward()); }},
      {.key = "gflop_step",
       .header_train = "GFLOP step",
       .header_infer = "GFLOP step",
       .latex_group = "Step cost",
       .latex_unit = "(GFLOP)",
       .needs = N::train,
       .note = kGflopNote,
       .text = [](C c) { return ColumnCell{format_giga(headline_flops(c.row))}; },
       .latex = [](C c) { return giga_latex(headline_flops(c.row)); }},
      // MACs next to GFLOP: papers and posts often quote MACs and call them FLOPs (a 2x gap).
      {.key = "gmac_fwd",
       .header_train = "GMAC fwd",
       .header_infer = "GMAC fwd",
       .latex_group = "Forward cost",
       .latex_unit = "(GMAC)",
       .note = kGmacNote,
       .sets = {in(S::compact_network, 8), in(S::compact_analysis, 4), in(S::latex_analysis, 3)},
       .text = [](C c) { return ColumnCell{format_giga(c.row.macs.forward)}; },
       .latex = [](C c) { return giga_latex(c.row.macs.forward); }},
      {.key = "gmac_bwd",
       .header_train = "GMAC bwd",
       .header_infer = "GMAC bwd",
       .latex_group = "Backward cost",
       .latex_unit = "(GMAC)",
       .needs = N::train,
       .note = kGmacNote,
       .text = [](C c) { return ColumnCell{format_giga(c.row.macs.backward())}; },
       .latex = [](C c) { return giga_latex(c.row.macs.backward()); }},
      {.key = "gmac_step",
       .header_train = "GMAC step",
       .header_infer = "GMAC step",
       .latex_group = "Step cost",
       .latex_unit = "(GMAC)",
       .needs = N::train,
       .note = kGmacNote,
       .text = [](C c) { return ColumnCell{format_giga(step_macs(c.row))}; },
       .latex = [](C c) { return giga_latex(step_macs(c.row)); }},
      {.key = "fwd_ms",
       .header_train = "fwd ms",
       .header_infer = "fwd ms",
       .latex_group = "Forward",
       .latex_unit = "(ms)",
       .needs = N::measured,
       .note = kTimeNote,
       .text = [](C c) { return ColumnCell{time_cell(c.row, c.row.forward)}; },
       .latex = [](C c) { return median_latex(c.row, c.row.forward); }},
      {.key = "bwd_ms",
       .header_train = "bwd ms",
       .header_infer = "bwd ms",
       .latex_group = "Backward",
       .latex_unit = "(ms)",
       .needs = N::measured | N::train,
       .note = kTimeNote,
       .text = [](C c) { return ColumnCell{time_cell(c.row, c.row.backward)}; },
       .latex = [](C c) { return median_latex(c.row, c.row.backward); }},
      {.key = "step_ms",
       .header_train = "step ms",
       .header_infer = "step ms",
       .latex_group = "Step",
       .latex_unit = "(ms)",
       .needs = N::measured | N::train,
       .note = kTimeNote,
       .text = [](C c) { return ColumnCell{time_cell(c.row, c.row.step)}; },
       .latex = [](C c) { return median_latex(c.row, c.row.step); }},
      // The headline time: the step's in training, the forward pass's in inference.
      {.key = "time_ms",
       .header_train = "step ms",
       .header_infer = "fwd ms",
       .latex_group = "time",
       .latex_unit = "(ms)",
       .needs = N::measured,
       .note = kTimeNote,
       .sets = {in(S::compact, 1), in(S::compact_network, 1), in(S::latex, 1), in(S::latex_sweep, 3)},
       .text = [](C c) { return ColumnCell{time_cell(c.row, headline_time(c.row))}; },
       .latex = [](C c) { return median_latex(c.row, headline_time(c.row)); }},
      {.key = "noise",
       .header_train = "step ±",
       .header_infer = "fwd ±",
       .latex_group = "time",
       .latex_unit = "$\\pm$ (\\%)",
       .needs = N::measured,
       .note = kTimeNote,
       .text =
           [](C c) {
             const auto& t = headline_time(c.row);
             return ColumnCell{ran(c.row) && t ? format_fixed(t->noise * 100.0, 1) + "%" : "-"};
           },
       .latex =
           [](C c) {
             const auto& t = headline_time(c.row);
             return ran(c.row) && t ? format_fixed(t->noise * 100.0, 1) : std::string("--");
           }},
      {.key = "graph_ms",
       .header_train = "graph ms",
       .header_infer = "graph ms",
       .latex_group = "Graph",
       .latex_unit = "(ms)",
       .needs = N::measured | N::graph,
       .note = "graph ms: the {phase} recorded once as a CUDA graph and replayed (no host work between kernels); "
               "eager time minus graph time is what launching op by op costs.",
       .sets = {in(S::compact, 2), in(S::compact_network, 2), in(S::latex, 3)},
       .text = [](C c) { return ColumnCell{time_cell(c.row, c.row.graph)}; },
       .latex = [](C c) { return median_latex(c.row, c.row.graph); }},
      {.key = "samples_per_s",
       .header_train = "samples/s",
       .header_infer = "samples/s",
       .latex_group = "Throughput",
       .latex_unit = "(samples/s)",
       .needs = N::measured,
       .note = "samples/s: the batch over the median time of the {phase}.",
       .sets = {in(S::compact, 4), in(S::compact_network, 4)},
       .text =
           [](C c) {
             const std::optional<double> v = samples_per_second(c.row);
             return ColumnCell{ran(c.row) && v ? format_significant(*v, 3) : "-"};
           },
       .latex =
           [](C c) {
             const std::optional<double> v = samples_per_second(c.row);
             return ran(c.row) && v ? sig(*v) : std::string("--");
           }},
      {.key = "tflops",
       .header_train = "TFLOP/s",
       .header_infer = "TFLOP/s",
       .latex_group = "Achieved",
       .latex_unit = "(TFLOP/s)",
       .needs = N::measured,
       .note = kRateNote,
       .text = [](C c) { return ColumnCell{rate_text(c.row, headline_flops(c.row), 1e12)}; },
       .latex = [](C c) { return rate_latex(c.row, headline_flops(c.row), 1e12); }},
      {.key = "gbs",
       .header_train = "GB/s",
       .header_infer = "GB/s",
       .latex_group = "Achieved",
       .latex_unit = "(GB/s)",
       .needs = N::measured,
       .note = kRateNote,
       .text = [](C c) { return ColumnCell{rate_text(c.row, headline_bytes(c.row), 1e9)}; },
       .latex = [](C c) { return rate_latex(c.row, headline_bytes(c.row), 1e9); }},
      {.key = "peak_measured",
       .header_train = "peak meas.",
       .header_infer = "peak meas.",
       .latex_group = "Peak memory",
       .latex_unit = "meas. (MiB)",
       .needs = N::measured,
       .note = kPeakNote,
       .text = [](C c) { return ColumnCell{has_measured_peak(c.row) ? format_mib(c.row.measured->peak_bytes) : "-"}; },
       .latex =
           [](C c) { return has_measured_peak(c.row) ? mib_latex(c.row.measured->peak_bytes) : std::string("--"); }},
      {.key = "peak_predicted",
       .header_train = "peak pred.",
       .header_infer = "peak pred.",
       .latex_group = "Peak memory",
       .latex_unit = "pred. (MiB)",
       .note = kPeakNote,
       .sets = {in(S::compact_analysis, 5)},
       .text = [](C c) { return ColumnCell{format_mib(c.row.predicted.peak_bytes)}; },
       .latex = [](C c) { return mib_latex(c.row.predicted.peak_bytes); }},
      // The peak a reader compares by: measured when the row has it, else predicted.
      {.key = "peak",
       .header_train = "peak",
       .header_infer = "peak",
       .latex_group = "Peak memory",
       .latex_unit = "(MiB)",
       .note = kPeakNote,
       .sets = {in(S::compact, 5), in(S::compact_network, 5), in(S::latex, 4), in(S::latex_analysis, 4),
                in(S::latex_sweep, 5)},
       .text = [](C c) { return ColumnCell{format_mib(shown_peak(c.row))}; },
       .latex = [](C c) { return mib_latex(shown_peak(c.row)); }},
      {.key = "saved",
       .header_train = "saved",
       .header_infer = "saved",
       .latex_group = "Saved",
       .latex_unit = "(MiB)",
       .note = "saved: activations kept for backward.",
       .sets = {in(S::compact_analysis, 6)},
       .text = [](C c) { return ColumnCell{format_mib(c.row.predicted.saved_bytes)}; },
       .latex = [](C c) { return mib_latex(c.row.predicted.saved_bytes); }},
      {.key = "params_x",
       .header_train = "params x",
       .header_infer = "params x",
       .latex_group = "Cost",
       .latex_unit = "Params ($\\times$)",
       .note = kRatioNote,
       .sets = {in(S::latex, 7)},
       .text =
           [](C c) {
             return ColumnCell{ratio_text(static_cast<double>(c.row.params), static_cast<double>(c.base.params))};
           },
       .latex = [](C c) { return ratio_latex(static_cast<double>(c.row.params), static_cast<double>(c.base.params)); }},
      {.key = "flop_x",
       .header_train = "FLOP x",
       .header_infer = "FLOP x",
       .latex_group = "Cost",
       .latex_unit = "FLOP ($\\times$)",
       .note = kRatioNote,
       .sets = {in(S::compact, 7), in(S::compact_network, 9), in(S::compact_analysis, 7), in(S::latex, 6),
                in(S::latex_analysis, 6)},
       .text =
           [](C c) {
             return ColumnCell{
                 ratio_text(static_cast<double>(headline_flops(c.row)), static_cast<double>(headline_flops(c.base)))};
           },
       .latex =
           [](C c) {
             return ratio_latex(static_cast<double>(headline_flops(c.row)),
                                static_cast<double>(headline_flops(c.base)));
           }},
      {.key = "time_x",
       .header_train = "step x",
       .header_infer = "fwd x",
       .latex_group = "time",
       .latex_unit = "($\\times$)",
       .needs = N::measured,
       .note = kRatioNote,
       .sets = {in(S::compact, 3), in(S::compact_network, 3), in(S::latex, 2), in(S::latex_sweep, 4)},
       .text =
           [](C c) {
             const auto x = time_ratio(c);
             return x ? ColumnCell{format_ratio(*x), ratio_tone(*x)} : ColumnCell{"-"};
           },
       .latex =
           [](C c) {
             const auto x = time_ratio(c);
             return x ? format_fixed(*x, 2) : std::string("--");
           }},
      {.key = "peak_x",
       .header_train = "peak x",
       .header_infer = "peak x",
       .latex_group = "Peak memory",
       .latex_unit = "($\\times$)",
       .note = kRatioNote,
       .sets = {in(S::compact, 6), in(S::compact_network, 6), in(S::compact_analysis, 8), in(S::latex, 5),
                in(S::latex_analysis, 5), in(S::latex_sweep, 6)},
       .text =
           [](C c) {
             return ColumnCell{
                 ratio_text(static_cast<double>(shown_peak(c.row)), static_cast<double>(shown_peak(c.base)))};
           },
       .latex =
           [](C c) {
             return ratio_latex(static_cast<double>(shown_peak(c.row)), static_cast<double>(shown_peak(c.base)));
           }},
      // A row that ran but whose times cannot be trusted says so where the reader looks; the
      // evidence is in the warnings under the table.
      {.key = "status",
       .header_train = "status",
       .header_infer = "status",
       .latex_group = "Status",
       .needs = N::measured,
       .align = ColumnAlign::words,
       .without_counts = WithoutCounts::own_cell,
       .sets = {in(S::compact, 8), in(S::compact_network, 10)},
       .text =
           [](C c) {
             return ColumnCell{ran(c.row)
                                   ? to_string(c.row.status) + trust_suffix(c.row)
                                   : to_string(c.row.status) + (c.row.message.empty() ? "" : ": " + c.row.message)};
           },
       .latex = [](C c) { return latex_escape(to_string(c.row.status) + (ran(c.row) ? trust_suffix(c.row) : "")); }},
  };
}

}  // namespace

const std::vector<ResultColumn>& result_columns() {
  static const std::vector<ResultColumn> all = make_result_columns();
  return all;
}

std::vector<std::string> column_set(ColumnSet set) {
  std::vector<std::pair<int, std::string>> placed;
  for (const ResultColumn& c : result_columns())
    for (const SetPlace& p : c.sets)
      if (p.set == set) placed.emplace_back(p.order, c.key);
  std::sort(placed.begin(), placed.end());
  std::vector<std::string> keys;
  for (const auto& [order, key] : placed) keys.push_back(key);
  return keys;
}

const std::vector<std::string>& result_column_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const ResultColumn& c : result_columns()) k.emplace_back(c.key);
    return k;
  }();
  return keys;
}

const ResultColumn& result_column(const std::string& key) {
  for (const ResultColumn& c : result_columns())
    if (key == c.key) return c;
  throw std::invalid_argument("unknown column \"" + key + "\"");
}

void check_result_columns(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) result_column(k);
}

std::string trust_suffix(const ResultRow& r) {
  const Trust t = assess_trust(r).level;
  return t == Trust::ok ? "" : " (" + to_string(t) + ")";
}

ColumnCell column_cell(const ResultColumn& c, const ColumnContext& context) {
  if (!counted(context.row.status) && c.without_counts == WithoutCounts::dash) return ColumnCell{"-"};
  return c.text(context);
}

std::string column_latex(const ResultColumn& c, const ColumnContext& context) {
  if (!counted(context.row.status) && c.without_counts == WithoutCounts::dash) return "--";
  return c.latex(context);
}

std::string variant_cell(const ResultRow& r) {
  return r.variant + (r.is_baseline ? " (base)" : "") + (counted(r.status) ? "" : " (" + to_string(r.status) + ")");
}

ColumnNeeds table_has(bool measured, bool train, bool graph) {
  return (measured ? ColumnNeeds::measured : ColumnNeeds::nothing) |
         (train ? ColumnNeeds::train : ColumnNeeds::nothing) | (graph ? ColumnNeeds::graph : ColumnNeeds::nothing);
}

bool column_applies(const ResultColumn& c, ColumnNeeds has) {
  return (static_cast<unsigned>(c.needs) & ~static_cast<unsigned>(has)) == 0;
}

std::string column_notes(const std::vector<std::string>& keys, const NoteContext& context) {
  const std::string pass = context.train && context.infer
                               ? "training step (train blocks) or inference pass (infer blocks)"
                           : context.train ? "training step"
                                           : "inference pass";
  const std::string phase = context.train && context.infer ? "step (train) or forward pass (infer)"
                            : context.train                ? "step (forward + backward)"
                                                           : "forward pass";
  std::vector<const char*> said;
  std::string out;
  for (const ResultColumn& c : result_columns()) {
    if (std::string(c.note).empty() || std::find(keys.begin(), keys.end(), c.key) == keys.end()) continue;
    if (std::find(said.begin(), said.end(), c.note) != said.end()) continue;
    said.push_back(c.note);
    out += (out.empty() ? "" : " ") + replace_all(replace_all(c.note, "{pass}", pass), "{phase}", phase);
  }
  return out;
}

std::string time_cell(const ResultRow& r, const std::optional<TimeStats>& t) {
  if (!ran(r) || !t) return "-";
  return format_fixed(t->median, 3) + " ±" + format_fixed(t->noise * 100.0, 1) + "%";
}

int64_t shown_peak(const ResultRow& r) {
  return has_measured_peak(r) ? r.measured->peak_bytes : r.predicted.peak_bytes;
}

}  // namespace convbench

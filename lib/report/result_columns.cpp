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

std::vector<ResultColumn> make_result_columns() {
  using C = const ColumnContext&;
  return {
      {"params", "params", "params", "Params", "", false, false, false, "",
       [](C c) { return ColumnCell{format_count(c.row.params)}; }, [](C c) { return format_count(c.row.params); }},
      {"gflop_fwd", "GFLOP fwd", "GFLOP fwd", "Forward cost", "(GFLOP)", false, false, false, kGflopNote,
       [](C c) { return ColumnCell{format_giga(c.row.flops.forward)}; },
       [](C c) { return giga_latex(c.row.flops.forward); }},
      {"gflop_bwd", "GFLOP bwd", "GFLOP bwd", "Backward cost", "(GFLOP)", false, true, false, kGflopNote,
       [](C c) { return ColumnCell{format_giga(c.row.flops.backward())}; },
       [](C c) { return giga_latex(c.row.flops.backward()); }},
      {"gflop_step", "GFLOP step", "GFLOP step", "Step cost", "(GFLOP)", false, true, false, kGflopNote,
       [](C c) { return ColumnCell{format_giga(headline_flops(c.row))}; },
       [](C c) { return giga_latex(headline_flops(c.row)); }},
      // MACs next to GFLOP: papers and posts often quote MACs and call them FLOPs (a 2x gap).
      {"gmac_fwd", "GMAC fwd", "GMAC fwd", "Forward cost", "(GMAC)", false, false, false, kGmacNote,
       [](C c) { return ColumnCell{format_giga(c.row.macs.forward)}; },
       [](C c) { return giga_latex(c.row.macs.forward); }},
      {"gmac_bwd", "GMAC bwd", "GMAC bwd", "Backward cost", "(GMAC)", false, true, false, kGmacNote,
       [](C c) { return ColumnCell{format_giga(c.row.macs.backward())}; },
       [](C c) { return giga_latex(c.row.macs.backward()); }},
      {"gmac_step", "GMAC step", "GMAC step", "Step cost", "(GMAC)", false, true, false, kGmacNote,
       [](C c) { return ColumnCell{format_giga(step_macs(c.row))}; }, [](C c) { return giga_latex(step_macs(c.row)); }},
      {"fwd_ms", "fwd ms", "fwd ms", "Forward", "(ms)", true, false, false, kTimeNote,
       [](C c) { return ColumnCell{time_cell(c.row, c.row.forward)}; },
       [](C c) { return median_latex(c.row, c.row.forward); }},
      {"bwd_ms", "bwd ms", "bwd ms", "Backward", "(ms)", true, true, false, kTimeNote,
       [](C c) { return ColumnCell{time_cell(c.row, c.row.backward)}; },
       [](C c) { return median_latex(c.row, c.row.backward); }},
      {"step_ms", "step ms", "step ms", "Step", "(ms)", true, true, false, kTimeNote,
       [](C c) { return ColumnCell{time_cell(c.row, c.row.step)}; },
       [](C c) { return median_latex(c.row, c.row.step); }},
      {"time_ms", "step ms", "fwd ms", "time", "(ms)", true, false, false, kTimeNote,
       [](C c) { return ColumnCell{time_cell(c.row, headline_time(c.row))}; },
       [](C c) { return median_latex(c.row, headline_time(c.row)); }},
      {"noise", "step ±", "fwd ±", "time", "$\\pm$ (\\%)", true, false, false, kTimeNote,
       [](C c) {
         const auto& t = headline_time(c.row);
         return ColumnCell{ran(c.row) && t ? format_fixed(t->noise * 100.0, 1) + "%" : "-"};
       },
       [](C c) {
         const auto& t = headline_time(c.row);
         return ran(c.row) && t ? format_fixed(t->noise * 100.0, 1) : std::string("--");
       }},
      {"graph_ms", "graph ms", "graph ms", "Graph", "(ms)", true, false, true,
       "graph ms: the {phase} recorded once as a CUDA graph and replayed (no host work between kernels); eager time "
       "minus graph time is what launching op by op costs.",
       [](C c) { return ColumnCell{time_cell(c.row, c.row.graph)}; },
       [](C c) { return median_latex(c.row, c.row.graph); }},
      {"samples_per_s", "samples/s", "samples/s", "Throughput", "(samples/s)", true, false, false,
       "samples/s: the batch over the median time of the {phase}.",
       [](C c) {
         const std::optional<double> v = samples_per_second(c.row);
         return ColumnCell{ran(c.row) && v ? format_significant(*v, 3) : "-"};
       },
       [](C c) {
         const std::optional<double> v = samples_per_second(c.row);
         return ran(c.row) && v ? sig(*v) : std::string("--");
       }},
      {"tflops", "TFLOP/s", "TFLOP/s", "Achieved", "(TFLOP/s)", true, false, false, kRateNote,
       [](C c) { return ColumnCell{rate_text(c.row, headline_flops(c.row), 1e12)}; },
       [](C c) { return rate_latex(c.row, headline_flops(c.row), 1e12); }},
      {"gbs", "GB/s", "GB/s", "Achieved", "(GB/s)", true, false, false, kRateNote,
       [](C c) { return ColumnCell{rate_text(c.row, headline_bytes(c.row), 1e9)}; },
       [](C c) { return rate_latex(c.row, headline_bytes(c.row), 1e9); }},
      {"peak_measured", "peak meas.", "peak meas.", "Peak memory", "meas. (MiB)", true, false, false, kPeakNote,
       [](C c) { return ColumnCell{has_measured_peak(c.row) ? format_mib(c.row.measured->peak_bytes) : "-"}; },
       [](C c) { return has_measured_peak(c.row) ? mib_latex(c.row.measured->peak_bytes) : std::string("--"); }},
      {"peak_predicted", "peak pred.", "peak pred.", "Peak memory", "pred. (MiB)", false, false, false, kPeakNote,
       [](C c) { return ColumnCell{format_mib(c.row.predicted.peak_bytes)}; },
       [](C c) { return mib_latex(c.row.predicted.peak_bytes); }},
      {"peak", "peak", "peak", "Peak memory", "(MiB)", false, false, false, kPeakNote,
       [](C c) { return ColumnCell{format_mib(shown_peak(c.row))}; }, [](C c) { return mib_latex(shown_peak(c.row)); }},
      {"saved", "saved", "saved", "Saved", "(MiB)", false, false, false, "saved: activations kept for backward.",
       [](C c) { return ColumnCell{format_mib(c.row.predicted.saved_bytes)}; },
       [](C c) { return mib_latex(c.row.predicted.saved_bytes); }},
      {"params_x", "params x", "params x", "Cost", "Params ($\\times$)", false, false, false, kRatioNote,
       [](C c) {
         return ColumnCell{ratio_text(static_cast<double>(c.row.params), static_cast<double>(c.base.params))};
       },
       [](C c) { return ratio_latex(static_cast<double>(c.row.params), static_cast<double>(c.base.params)); }},
      {"flop_x", "FLOP x", "FLOP x", "Cost", "FLOP ($\\times$)", false, false, false, kRatioNote,
       [](C c) {
         return ColumnCell{
             ratio_text(static_cast<double>(headline_flops(c.row)), static_cast<double>(headline_flops(c.base)))};
       },
       [](C c) {
         return ratio_latex(static_cast<double>(headline_flops(c.row)), static_cast<double>(headline_flops(c.base)));
       }},
      {"time_x", "step x", "fwd x", "time", "($\\times$)", true, false, false, kRatioNote,
       [](C c) {
         const auto x = time_ratio(c);
         return x ? ColumnCell{format_ratio(*x), ratio_tone(*x)} : ColumnCell{"-"};
       },
       [](C c) {
         const auto x = time_ratio(c);
         return x ? format_fixed(*x, 2) : std::string("--");
       }},
      {"peak_x", "peak x", "peak x", "Peak memory", "($\\times$)", false, false, false, kRatioNote,
       [](C c) {
         return ColumnCell{ratio_text(static_cast<double>(shown_peak(c.row)), static_cast<double>(shown_peak(c.base)))};
       },
       [](C c) {
         return ratio_latex(static_cast<double>(shown_peak(c.row)), static_cast<double>(shown_peak(c.base)));
       }},
      // A row that ran but whose times cannot be trusted says so where the reader looks; the
      // evidence is in the warnings under the table.
      {"status", "status", "status", "Status", "", true, false, false, "",
       [](C c) {
         return ColumnCell{ran(c.row) ? to_string(c.row.status) + trust_suffix(c.row)
                                      : to_string(c.row.status) + (c.row.message.empty() ? "" : ": " + c.row.message)};
       },
       [](C c) { return latex_escape(to_string(c.row.status) + (ran(c.row) ? trust_suffix(c.row) : "")); }},
  };
}

}  // namespace

const std::vector<ResultColumn>& result_columns() {
  static const std::vector<ResultColumn> all = make_result_columns();
  return all;
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
  if (!counted(context.row.status) && std::string_view(c.key) != "status") return ColumnCell{"-"};
  return c.text(context);
}

std::string column_latex(const ResultColumn& c, const ColumnContext& context) {
  if (!counted(context.row.status) && std::string_view(c.key) != "status") return "--";
  return c.latex(context);
}

std::string variant_cell(const ResultRow& r) {
  return r.variant + (r.is_baseline ? " (base)" : "") + (counted(r.status) ? "" : " (" + to_string(r.status) + ")");
}

bool column_applies(const ResultColumn& c, bool measured, bool train, bool graph) {
  return !(c.measured_only && !measured) && !(c.train_only && !train) && !(c.graph_only && !graph);
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

#include "report/latex_table.hpp"

#include <cctype>
#include <functional>
#include <stdexcept>

#include "report/markup_escape.hpp"
#include "report/run_warnings.hpp"
#include "report/text_table.hpp"

namespace convbench {
namespace {

// The header says ($\times$), so the cells carry the bare ratio.
std::string ratio_cell(double value, double base) { return base > 0 ? format_fixed(value / base, 2) : "--"; }

// A label that LaTeX accepts: letters, digits and a few separators.
std::string label_of(const ResultRow& r) {
  std::string raw = "tab:convbench:" + r.block + (r.point_label.empty() ? "" : ":" + r.point_label), out;
  for (char c : raw) out += (std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '-' || c == '.') ? c : '-';
  return out;
}

std::string caption_of(const ResultRow& r, bool measured) {
  std::string shape;
  for (size_t i = 0; i < r.input_shape.size(); ++i) shape += (i ? "$\\times$" : "") + std::to_string(r.input_shape[i]);
  std::string c = latex_escape(r.block) + (r.point_label.empty() ? "" : " (" + latex_escape(r.point_label) + ")") +
                  ": input " + shape + ", " + latex_escape(r.dtype) + ", " + latex_escape(r.layout) + ", " +
                  (r.mode == "train" ? "one training step" : "inference");
  if (measured)
    c += ", measured on " + latex_escape(r.device) +
         "; times are medians of the samples, peaks measured where the "
         "run measured them";
  return c + ". Ratios ($\\times$) are against the baseline, " + latex_escape(r.variant) + ".";
}

// One column of the LaTeX table. Columns of the same group sit under one \multicolumn header
// with a \cmidrule; `unit` is the second header line.
struct LatexColumn {
  const char* name;   // for --latex-columns
  const char* group;  // "" for none; "time" is filled in as Step / Forward
  const char* unit;
  bool measured_only, train_only, graph_only;
  std::function<std::string(const ResultRow& r, const ResultRow& base)> cell;
};

int64_t shown_peak(const ResultRow& r) {
  return has_measured_peak(r) ? r.measured->peak_bytes : r.predicted.peak_bytes;
}

// Three significant digits: what a table in a paper can defend from a benchmark's noise.
std::string sig(double x) { return format_significant(x, 3); }

std::string median_cell(const ResultRow& r, const std::optional<TimeStats>& t) {
  return ran(r) && t ? sig(t->median) : "--";
}

const std::vector<LatexColumn>& latex_columns() {
  static const std::vector<LatexColumn> all = {
      {"params", "Params", "", false, false, false,
       [](const ResultRow& r, const ResultRow&) { return format_count(r.params); }},
      {"gflop", "Cost", "(GFLOP)", false, false, false,
       [](const ResultRow& r, const ResultRow&) { return sig(static_cast<double>(headline_flops(r)) * 1e-9); }},
      {"gmac", "Cost", "(GMAC)", false, false, false,
       [](const ResultRow& r, const ResultRow&) {
         const int64_t macs = is_training(r) ? r.macs.forward + r.macs.backward() : r.macs.forward;
         return sig(static_cast<double>(macs) * 1e-9);
       }},
      {"flop_x", "Cost", "FLOP ($\\times$)", false, false, false,
       [](const ResultRow& r, const ResultRow& b) {
         return ratio_cell(static_cast<double>(headline_flops(r)), static_cast<double>(headline_flops(b)));
       }},
      {"params_x", "Cost", "Params ($\\times$)", false, false, false,
       [](const ResultRow& r, const ResultRow& b) {
         return ratio_cell(static_cast<double>(r.params), static_cast<double>(b.params));
       }},
      {"fwd", "Forward", "(ms)", true, true, false,
       [](const ResultRow& r, const ResultRow&) { return median_cell(r, r.forward); }},
      {"bwd", "Backward", "(ms)", true, true, false,
       [](const ResultRow& r, const ResultRow&) { return median_cell(r, r.backward); }},
      {"time", "time", "(ms)", true, false, false,
       [](const ResultRow& r, const ResultRow&) { return median_cell(r, headline_time(r)); }},
      {"noise", "time", "$\\pm$ (\\%)", true, false, false,
       [](const ResultRow& r, const ResultRow&) {
         const auto& t = headline_time(r);
         return ran(r) && t ? format_fixed(t->noise * 100.0, 1) : std::string("--");
       }},
      {"time_x", "time", "($\\times$)", true, false, false,
       [](const ResultRow& r, const ResultRow& b) {
         const auto& t = headline_time(r);
         const auto& bt = headline_time(b);
         return ran(r) && ran(b) && t && bt ? ratio_cell(t->median, bt->median) : std::string("--");
       }},
      {"graph", "Graph", "(ms)", true, false, true,
       [](const ResultRow& r, const ResultRow&) { return median_cell(r, r.graph); }},
      {"samples_per_s", "Throughput", "(samples/s)", true, false, false,
       [](const ResultRow& r, const ResultRow&) {
         const std::optional<double> v = samples_per_second(r);
         return ran(r) && v ? sig(*v) : std::string("--");
       }},
      {"tflops", "Achieved", "(TFLOP/s)", true, false, false,
       [](const ResultRow& r, const ResultRow&) {
         const auto& t = headline_time(r);
         return ran(r) && t && t->median > 0 ? sig(static_cast<double>(headline_flops(r)) / (t->median * 1e-3) / 1e12)
                                             : std::string("--");
       }},
      {"peak", "Peak memory", "(MiB)", false, false, false,
       [](const ResultRow& r, const ResultRow&) { return sig(static_cast<double>(shown_peak(r)) / 1048576.0); }},
      {"peak_x", "Peak memory", "($\\times$)", false, false, false,
       [](const ResultRow& r, const ResultRow& b) {
         return ratio_cell(static_cast<double>(shown_peak(r)), static_cast<double>(shown_peak(b)));
       }},
      {"saved", "Saved", "(MiB)", false, false, false,
       [](const ResultRow& r, const ResultRow&) {
         return sig(static_cast<double>(r.predicted.saved_bytes) / 1048576.0);
       }},
  };
  return all;
}

const LatexColumn& latex_column_named(const std::string& name) {
  for (const LatexColumn& c : latex_columns())
    if (name == c.name) return c;
  throw std::invalid_argument("unknown LaTeX column \"" + name + "\"");
}

// The default fits one column of a one-column article (345 pt) in \footnotesize.
const std::vector<std::string> kMeasuredDefault = {"time", "time_x", "graph", "peak", "peak_x", "flop_x", "params_x"};
// GMAC next to GFLOP (papers often quote MACs as FLOPs); params x gives way to it to fit the column.
const std::vector<std::string> kAnalysisDefault = {"params", "gflop", "gmac", "peak", "peak_x", "flop_x"};

std::string table_of(const std::vector<const ResultRow*>& group, const std::vector<std::string>& chosen) {
  const ResultRow& base = baseline_of(group);
  const bool train = is_training(base);
  bool measured = false, graph = false;
  for (const ResultRow* r : group) {
    measured = measured || !r->device.empty();
    graph = graph || ran_with_graph(*r);
  }
  const std::vector<std::string>& names = !chosen.empty() ? chosen : measured ? kMeasuredDefault : kAnalysisDefault;
  std::vector<const LatexColumn*> cols;
  for (const std::string& n : names) {
    const LatexColumn& c = latex_column_named(n);
    if ((c.measured_only && !measured) || (c.train_only && !train) || (c.graph_only && !graph)) continue;
    cols.push_back(&c);
  }
  const auto group_name = [&](const LatexColumn& c) {
    return std::string(c.group) == "time" ? std::string(train ? "Step" : "Forward") : std::string(c.group);
  };

  std::string out = "\\begin{table}[htbp]\n\\centering\n\\footnotesize\n\\setlength{\\tabcolsep}{4pt}\n\\caption{" +
                    caption_of(base, measured) + "}\n\\label{" + label_of(base) + "}\n\\begin{tabular}{l" +
                    std::string(cols.size(), 'r') + "}\n\\toprule\n";
  // Header line 1: each run of columns with the same group under one \multicolumn, ruled.
  std::string groups = "Variant", rules;
  for (size_t i = 0; i < cols.size();) {
    size_t j = i;
    while (j + 1 < cols.size() && group_name(*cols[j + 1]) == group_name(*cols[i])) ++j;
    const size_t span = j - i + 1;
    const std::string name = group_name(*cols[i]);
    groups += " & " + (span == 1 ? name : "\\multicolumn{" + std::to_string(span) + "}{c}{" + name + "}");
    if (span > 1) rules += "\\cmidrule(lr){" + std::to_string(i + 2) + "-" + std::to_string(j + 2) + "}";
    i = j + 1;
  }
  out += groups + " \\\\\n" + (rules.empty() ? "" : rules + "\n");
  std::string units;
  for (const LatexColumn* c : cols) units += std::string(" & ") + c->unit;
  out += units + " \\\\\n\\midrule\n";
  for (const ResultRow* r : group) {
    std::string name = latex_escape(r->variant);
    if (r->is_baseline) name += " (base)";
    if (measured && !ran(*r)) name += " (" + latex_escape(to_string(r->status)) + ")";
    std::string line = name;
    for (const LatexColumn* c : cols) line += " & " + c->cell(*r, base);
    out += line + " \\\\\n";
  }
  return out + "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
}

}  // namespace

const std::vector<std::string>& latex_column_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const LatexColumn& c : latex_columns()) n.emplace_back(c.name);
    return n;
  }();
  return names;
}

void check_latex_columns(const std::vector<std::string>& names) {
  for (const std::string& n : names) latex_column_named(n);
}

std::string format_latex(const ResultSet& results) { return format_latex(results, {}); }

std::string format_latex(const ResultSet& results, const std::vector<std::string>& columns) {
  std::string out =
      "% convbench results as LaTeX tables; needs \\usepackage{booktabs}.\n% Generated by " +
      latex_escape(results.engine) + " from " + std::to_string(results.rows.size()) + " result rows.\n" +
      "% GFLOP: 2 x MACs plus elementwise work; GMAC: the multiply-accumulates alone (what many papers\n" +
      "% call FLOPs; 1 MAC = 2 FLOP). Peak: peak bytes of one training step or inference\n" +
      "% pass (pred.: convbench's memory model; meas.: the runtime's allocator). Saved: activations\n" +
      "% kept for backward. TFLOP/s: the step's (or forward's) FLOPs over its median time. Times\n" +
      "% are medians; \\pm: stdev / mean of the samples. Numbers keep 3 significant digits.\n";
  bool graph = false;
  for (const ResultRow& r : results.rows) graph = graph || ran_with_graph(r);
  if (graph) out += "% Graph: the step (or forward) recorded once as a CUDA graph and replayed.\n";
  // What the reader must know before trusting the times stays with the table, as comments.
  for (const std::string& w : run_warnings(results)) out += "% warning: " + printable(w) + "\n";
  for (const auto& group : group_by_block(results)) out += "\n" + table_of(group, columns);
  return out;
}

}  // namespace convbench

#include "report/latex_table.hpp"

#include <cctype>

#include "report/markup_escape.hpp"
#include "report/run_warnings.hpp"
#include "report/text_table.hpp"

namespace convbench {
namespace {

std::string mib(int64_t bytes) { return format_fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 2); }

// The header says ($\times$), so the cells carry the bare ratio.
std::string ratio_cell(double value, double base) { return base > 0 ? format_fixed(value / base, 2) : "--"; }

std::string time_cell(const ResultRow& r, const std::optional<TimeStats>& t) {
  if (r.status != RunStatus::ok) return "--";
  if (!t) return "--";
  return format_fixed(t->median, 3) + " $\\pm$" + format_fixed(t->noise * 100.0, 1) + "\\%";
}

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
  if (measured) c += ", measured on " + latex_escape(r.device) + "; times are medians $\\pm$ relative noise";
  return c + ". Ratios ($\\times$) are against the baseline, " + latex_escape(r.variant) + ".";
}

std::string table_of(const std::vector<const ResultRow*>& group) {
  const ResultRow& base = baseline_of(group);
  const bool train = is_training(base);
  bool measured = false, graph = false;
  for (const ResultRow* r : group) {
    measured = measured || !r->device.empty();
    graph = graph || ran_with_graph(*r);
  }

  // Two header lines, names over units, keep the columns narrow.
  std::vector<std::pair<std::string, std::string>> header = {{"Variant", ""}, {"Params", ""}, {"Fwd", "(GFLOP)"}};
  if (train) header.push_back({"Bwd", "(GFLOP)"});
  if (measured) {
    header.push_back({"Fwd", "(ms)"});
    if (train) header.insert(header.end(), {{"Bwd", "(ms)"}, {"Step", "(ms)"}});
    if (graph) header.push_back({"Graph", "(ms)"});
    header.insert(header.end(), {{"Achieved", "(TFLOP/s)"}, {"Peak meas.", "(MiB)"}});
  }
  header.insert(header.end(),
                {{"Peak pred.", "(MiB)"}, {"Saved", "(MiB)"}, {"Params", "($\\times$)"}, {"FLOP", "($\\times$)"}});
  if (measured) header.push_back({train ? "Step" : "Fwd", "($\\times$)"});
  header.push_back({"Peak", "($\\times$)"});

  std::vector<std::vector<std::string>> rows;
  const double base_flops = static_cast<double>(headline_flops(base));
  const auto& base_time = headline_time(base);
  for (const ResultRow* r : group) {
    const bool ok = r->status == RunStatus::ok;
    std::string name = latex_escape(r->variant);
    if (r->is_baseline) name += " (baseline)";
    if (measured && !ok) name += " (" + latex_escape(to_string(r->status)) + ")";
    std::vector<std::string> row = {name, format_count(r->params), format_giga(r->flops.forward)};
    if (train) row.push_back(format_giga(r->flops.backward()));
    if (measured) {
      row.push_back(time_cell(*r, r->forward));
      if (train) {
        row.push_back(time_cell(*r, r->backward));
        row.push_back(time_cell(*r, r->step));
      }
      if (graph) row.push_back(time_cell(*r, r->graph));
      const auto& t = headline_time(*r);
      row.push_back(ok && t && t->median > 0
                        ? format_significant(static_cast<double>(headline_flops(*r)) / (t->median * 1e-3) / 1e12, 3)
                        : "--");
      row.push_back(has_measured_peak(*r) ? mib(r->measured->peak_bytes) : "--");
    }
    row.push_back(mib(r->predicted.peak_bytes));
    row.push_back(mib(r->predicted.saved_bytes));
    row.push_back(ratio_cell(static_cast<double>(r->params), static_cast<double>(base.params)));
    row.push_back(ratio_cell(static_cast<double>(headline_flops(*r)), base_flops));
    if (measured) {
      const auto& t = headline_time(*r);
      row.push_back(ok && base.status == RunStatus::ok && t && base_time ? ratio_cell(t->median, base_time->median)
                                                                         : "--");
    }
    const int64_t peak = has_measured_peak(*r) ? r->measured->peak_bytes : r->predicted.peak_bytes;
    const int64_t base_peak = has_measured_peak(base) ? base.measured->peak_bytes : base.predicted.peak_bytes;
    row.push_back(ratio_cell(static_cast<double>(peak), static_cast<double>(base_peak)));
    rows.push_back(std::move(row));
  }

  std::string out = "\\begin{table}[htbp]\n\\centering\n\\footnotesize\n\\setlength{\\tabcolsep}{4pt}\n\\caption{" +
                    caption_of(base, measured) + "}\n\\label{" + label_of(base) + "}\n\\begin{tabular}{l" +
                    std::string(header.size() - 1, 'r') + "}\n\\toprule\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? " & " : "") + cells[i];
    out += " \\\\\n";
  };
  std::vector<std::string> names, units;
  for (const auto& [name, unit] : header) {
    names.push_back(name);
    units.push_back(unit);
  }
  line(names);
  line(units);
  out += "\\midrule\n";
  for (const auto& row : rows) line(row);
  return out + "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
}

}  // namespace

std::string format_latex(const ResultSet& results) {
  std::string out = "% convbench results as LaTeX tables; needs \\usepackage{booktabs}.\n% Generated by " +
                    latex_escape(results.engine) + " from " + std::to_string(results.rows.size()) + " result rows.\n" +
                    "% GFLOP: 2 x MACs plus elementwise work. Peak: peak bytes of one training step or inference\n" +
                    "% pass (pred.: convbench's memory model; meas.: the runtime's allocator). Saved: activations\n" +
                    "% kept for backward. TFLOP/s: the step's (or forward's) FLOPs over its median time.\n";
  bool graph = false;
  for (const ResultRow& r : results.rows) graph = graph || ran_with_graph(r);
  if (graph) out += "% Graph: the step (or forward) recorded once as a CUDA graph and replayed.\n";
  // What the reader must know before trusting the times stays with the table, as comments.
  for (const std::string& w : run_warnings(results)) out += "% warning: " + printable(w) + "\n";
  for (const auto& group : group_by_block(results)) out += "\n" + table_of(group);
  return out;
}

}  // namespace convbench

#include "report/latex_table.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "report/result_columns.hpp"
#include "report/run_warnings.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

// A label that LaTeX accepts: letters, digits and a few separators.
std::string label_of(const ResultRow& r) {
  std::string raw = "tab:convbench:" + r.block + (r.point_label.empty() ? "" : ":" + r.point_label), out;
  for (char c : raw) out += (std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '-' || c == '.') ? c : '-';
  return out;
}

// A paragraph as LaTeX comment lines of at most about 100 columns.
std::string comment_lines(const std::string& text) {
  std::string out, line;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > 98) {
      out += "% " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return line.empty() ? out : out + "% " + line + "\n";
}

std::string caption_of(const ResultRow& r, bool measured, bool untrusted) {
  std::string shape;
  for (size_t i = 0; i < r.input_shape.size(); ++i) shape += (i ? "$\\times$" : "") + std::to_string(r.input_shape[i]);
  std::string c = latex_escape(r.block) + (r.point_label.empty() ? "" : " (" + latex_escape(r.point_label) + ")") +
                  ": input " + shape + ", " + latex_escape(r.dtype) + ", " + latex_escape(r.layout) + ", " +
                  (r.mode == "train" ? "one training step" : "inference");
  if (measured)
    c += ", measured on " + latex_escape(r.device) +
         "; times are medians of the samples, peaks measured where the "
         "run measured them";
  c += ". Ratios ($\\times$) are against the baseline, " + latex_escape(r.variant) + ".";
  if (untrusted)
    c += " Rows marked disturbed were timed while the machine was busy, noisy ones with a spread past the stopping "
         "rule: their times are not to be trusted.";
  return c;
}

// The default fits one column of a one-column article (345 pt) in \footnotesize.
const std::vector<std::string> kMeasuredDefault = {"time_ms", "time_x", "graph_ms", "peak",
                                                   "peak_x",  "flop_x", "params_x"};
// The forward pass's GFLOP and GMAC (what papers compare blocks by); params x gives way to them
// to fit the column.
const std::vector<std::string> kAnalysisDefault = {"params", "gflop_fwd", "gmac_fwd", "peak", "peak_x", "flop_x"};

// The default columns of a table of these rows, or the chosen ones, that apply to it.
std::vector<const ResultColumn*> latex_columns_of(const std::vector<const ResultRow*>& group,
                                                  const std::vector<std::string>& chosen) {
  bool measured = false, graph = false;
  for (const ResultRow* r : group) {
    measured = measured || !r->device.empty();
    graph = graph || ran_with_graph(*r);
  }
  const std::vector<std::string>& names = !chosen.empty() ? chosen : measured ? kMeasuredDefault : kAnalysisDefault;
  std::vector<const ResultColumn*> cols;
  for (const std::string& n : names) {
    const ResultColumn& c = result_column(n);
    if (column_applies(c, measured, is_training(baseline_of(group)), graph)) cols.push_back(&c);
  }
  return cols;
}

std::string table_of(const std::vector<const ResultRow*>& group, const std::vector<std::string>& chosen) {
  const ResultRow& base = baseline_of(group);
  const bool train = is_training(base);
  bool measured = false, untrusted = false;
  for (const ResultRow* r : group) {
    measured = measured || !r->device.empty();
    untrusted = untrusted || (!r->device.empty() && ran(*r) && !trust_suffix(*r).empty());
  }
  const std::vector<const ResultColumn*> cols = latex_columns_of(group, chosen);
  const auto group_name = [&](const ResultColumn& c) {
    return std::string(c.latex_group) == "time" ? std::string(train ? "Step" : "Forward") : std::string(c.latex_group);
  };

  std::string out = "\\begin{table}[htbp]\n\\centering\n\\footnotesize\n\\setlength{\\tabcolsep}{4pt}\n\\caption{" +
                    caption_of(base, measured, untrusted) + "}\n\\label{" + label_of(base) + "}\n\\begin{tabular}{l" +
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
  for (const ResultColumn* c : cols) units += std::string(" & ") + c->latex_unit;
  out += units + " \\\\\n\\midrule\n";
  for (const ResultRow* r : group) {
    std::string name = latex_escape(r->variant);
    if (r->is_baseline) name += " (base)";
    if ((measured || !counted(r->status)) && !ran(*r)) name += " (" + latex_escape(to_string(r->status)) + ")";
    // A row whose times cannot be trusted says so in the body, not only in a % comment.
    if (measured && ran(*r)) name += latex_escape(trust_suffix(*r));
    std::string line = name;
    for (const ResultColumn* c : cols) line += " & " + column_latex(*c, ColumnContext{*r, base, train});
    out += line + " \\\\\n";
  }
  return out + "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
}

}  // namespace

std::string format_latex(const ResultSet& results) { return format_latex(results, {}); }

std::string format_latex(const ResultSet& results, const std::vector<std::string>& columns) {
  // What the shown columns mean, as comments: the notes every format shares.
  std::vector<std::string> shown;
  NoteContext context;
  for (const auto& group : group_by_block(results)) {
    for (const ResultColumn* c : latex_columns_of(group, columns))
      if (std::find(shown.begin(), shown.end(), c->key) == shown.end()) shown.emplace_back(c->key);
    (is_training(baseline_of(group)) ? context.train : context.infer) = true;
  }
  std::string out = "% convbench results as LaTeX tables; needs \\usepackage{booktabs}.\n% Generated by " +
                    latex_escape(results.engine) + " from " + std::to_string(results.rows.size()) +
                    " result rows. Numbers keep 3 significant digits.\n";
  if (const std::string notes = column_notes(shown, context); !notes.empty()) out += comment_lines(notes);
  // What the reader must know before trusting the times stays with the table, as comments.
  for (const std::string& w : run_warnings(results)) out += "% warning: " + printable(w) + "\n";
  for (const auto& group : group_by_block(results)) out += "\n" + table_of(group, columns);
  return out;
}

}  // namespace convbench

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
// `whole_sweep`: the block's label alone (its table holds every point).
std::string label_of(const ResultRow& r, bool whole_sweep = false) {
  std::string raw = "tab:convbench:" + r.block + (r.point_label.empty() || whole_sweep ? "" : ":" + r.point_label), out;
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

// The caption: the block (and point, or the swept fields of a whole sweep), the workload, and what
// the shown columns mean.
std::string caption_of(const ResultRow& r, bool measured, bool untrusted, bool ratios, const std::string& sweep) {
  std::string shape;
  for (size_t i = 0; i < r.input_shape.size(); ++i) shape += (i ? "$\\times$" : "") + std::to_string(r.input_shape[i]);
  std::string c = latex_escape(r.block);
  if (!sweep.empty())
    c += ", swept over " + latex_escape(sweep) + " (a group of rows per point): " + latex_escape(r.dtype) + ", " +
         latex_escape(r.layout) + ", ";
  else
    c += (r.point_label.empty() ? "" : " (" + latex_escape(r.point_label) + ")") + ": input " + shape + ", " +
         latex_escape(r.dtype) + ", " + latex_escape(r.layout) + ", ";
  c += r.mode == "train" ? "one training step" : "inference";
  if (measured)
    c += ", measured on " + latex_escape(r.device) +
         "; times are medians of the samples, peaks measured where the "
         "run measured them";
  c += ".";
  if (ratios)
    c += " Ratios ($\\times$) are against the baseline, " + latex_escape(r.variant) +
         (sweep.empty() ? "" : ", at the same point") + ".";
  if (untrusted)
    c += " Rows marked disturbed were timed while the machine was busy, noisy ones with a spread past the stopping "
         "rule: their times are not to be trusted.";
  return c;
}

bool is_ratio(const ResultColumn& c) { return std::string(c.key).ends_with("_x"); }

// The default columns of a table of these rows, or the chosen ones, that apply to it.
std::vector<const ResultColumn*> latex_columns_of(const std::vector<const ResultRow*>& group,
                                                  const std::vector<std::string>& chosen,
                                                  LatexGrouping grouping = LatexGrouping::per_point) {
  bool measured = false, graph = false;
  for (const ResultRow* r : group) {
    measured = measured || !r->device.empty();
    graph = graph || ran_with_graph(*r);
  }
  // The defaults fit one column of a one-column article (345 pt) in \footnotesize. A whole sweep
  // in one table has absolute figures (params, forward GFLOP, ms, MiB) beside the ratios that fit.
  const bool sweep = grouping == LatexGrouping::per_block;
  const std::vector<std::string> names = !chosen.empty() ? chosen
                                         : !measured     ? column_set(ColumnSet::latex_analysis)
                                                     : column_set(sweep ? ColumnSet::latex_sweep : ColumnSet::latex);
  std::vector<const ResultColumn*> cols;
  for (const std::string& n : names) {
    const ResultColumn& c = result_column(n);
    if (column_applies(c, table_has(measured, is_training(baseline_of(group)), graph))) cols.push_back(&c);
  }
  return cols;
}

// A row's cells after the point's: the variant's name, marked, then each column's.
std::string row_of(const ResultRow& row, const ResultRow& base, const std::vector<const ResultColumn*>& cols,
                   bool measured, bool train) {
  std::string line = latex_escape(row.variant);
  if (row.is_baseline) line += " (base)";
  if ((measured || !counted(row.status)) && !ran(row)) line += " (" + latex_escape(to_string(row.status)) + ")";
  // A row whose times cannot be trusted says so in the body, not only in a % comment.
  if (measured && ran(row)) line += latex_escape(trust_suffix(row));
  for (const ResultColumn* c : cols) line += " & " + column_latex(*c, ColumnContext{row, base, train});
  return line;
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// The swept fields of a block's points, in the order the points say them.
std::vector<std::string> swept_fields(const std::vector<std::vector<const ResultRow*>>& points) {
  std::vector<std::string> out;
  for (const auto& field : points.front().front()->point) out.push_back(field.first);
  return out;
}

// A swept value as a cell: a JSON string without its quotes, anything else as written.
std::string point_value(const ResultRow& r, const std::string& field) {
  for (const auto& [name, text] : r.point)
    if (name == field) {
      const nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
      return latex_escape(v.is_string() ? v.get<std::string>() : text);
    }
  return "";
}

// One table of `points` (the groups of one block at each of its sweep points; one group when not
// a whole sweep): a first column with the point when there are several.
std::string table_of(const std::vector<std::vector<const ResultRow*>>& points, const std::vector<std::string>& chosen,
                     LatexGrouping grouping) {
  std::vector<const ResultRow*> group;
  for (const auto& p : points) group.insert(group.end(), p.begin(), p.end());
  const bool several = points.size() > 1;
  const std::vector<std::string> fields = several ? swept_fields(points) : std::vector<std::string>{};
  const ResultRow& base = baseline_of(points.front());
  const bool train = is_training(base);
  bool measured = false, untrusted = false;
  for (const ResultRow* r : group) {
    measured = measured || !r->device.empty();
    untrusted = untrusted || (!r->device.empty() && ran(*r) && !trust_suffix(*r).empty());
  }
  const std::vector<const ResultColumn*> cols = latex_columns_of(group, chosen, grouping);
  bool ratios = false;
  for (const ResultColumn* c : cols) ratios = ratios || is_ratio(*c);
  const size_t lead = fields.size() + 1;  // the swept fields' and the variant's columns
  const auto group_name = [&](const ResultColumn& c) {
    return std::string(c.latex_group) == "time" ? std::string(train ? "Step" : "Forward") : std::string(c.latex_group);
  };

  std::string out = "\\begin{table}[htbp]\n\\centering\n\\footnotesize\n\\setlength{\\tabcolsep}{4pt}\n\\caption{" +
                    caption_of(base, measured, untrusted, ratios, several ? join(fields, ", ") : "") + "}\n\\label{" +
                    label_of(base, several) + "}\n\\begin{tabular}{" + std::string(lead, 'l') +
                    std::string(cols.size(), 'r') + "}\n\\toprule\n";
  // Header line 1: each run of columns with the same group under one \multicolumn, ruled.
  std::string groups, rules;
  for (const std::string& f : fields) groups += latex_escape(f) + " & ";
  groups += "Variant";
  for (size_t i = 0; i < cols.size();) {
    size_t j = i;
    while (j + 1 < cols.size() && group_name(*cols[j + 1]) == group_name(*cols[i])) ++j;
    const size_t span = j - i + 1;
    const std::string name = group_name(*cols[i]);
    groups += " & " + (span == 1 ? name : "\\multicolumn{" + std::to_string(span) + "}{c}{" + name + "}");
    if (span > 1) rules += "\\cmidrule(lr){" + std::to_string(i + 1 + lead) + "-" + std::to_string(j + 1 + lead) + "}";
    i = j + 1;
  }
  out += groups + " \\\\\n" + (rules.empty() ? "" : rules + "\n");
  std::string units;  // the swept fields' and the variant's cells are empty
  for (size_t f = 0; f < fields.size(); ++f) units += " & ";
  for (const ResultColumn* c : cols) units += std::string(" & ") + c->latex_unit;
  out += units + " \\\\\n\\midrule\n";
  for (size_t p = 0; p < points.size(); ++p)
    for (const ResultRow* r : points[p]) {
      if (several && p > 0 && r == points[p].front()) out += "\\midrule\n";
      std::string point;
      for (const std::string& f : fields) point += (r == points[p].front() ? point_value(*r, f) : "") + " & ";
      out += point + row_of(*r, baseline_of(points[p]), cols, measured, train) + " \\\\\n";
    }
  return out + "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
}

}  // namespace

std::string format_latex(const ResultSet& results) { return format_latex(results, {}); }

std::string format_latex(const ResultSet& results, const std::vector<std::string>& columns, LatexGrouping grouping) {
  // The tables: each block and point alone, or each block's points together (consecutive groups
  // of one block: a sweep's points follow each other).
  std::vector<std::vector<std::vector<const ResultRow*>>> tables;
  for (const auto& group : group_by_block(results)) {
    if (grouping == LatexGrouping::per_block && !tables.empty() &&
        tables.back().front().front()->block == group.front()->block)
      tables.back().push_back(group);
    else
      tables.push_back({group});
  }
  // What the shown columns mean, as comments: the notes every format shares.
  std::vector<std::string> shown;
  NoteContext context;
  for (const auto& points : tables) {
    std::vector<const ResultRow*> rows;
    for (const auto& p : points) rows.insert(rows.end(), p.begin(), p.end());
    for (const ResultColumn* c : latex_columns_of(rows, columns, grouping))
      if (std::find(shown.begin(), shown.end(), c->key) == shown.end()) shown.emplace_back(c->key);
    (is_training(baseline_of(rows)) ? context.train : context.infer) = true;
  }
  std::string out = "% convbench results as LaTeX tables; needs \\usepackage{booktabs}.\n% Generated by " +
                    latex_escape(results.engine) + " from " + std::to_string(results.rows.size()) +
                    " result rows. Numbers keep 3 significant digits.\n";
  if (const std::string notes = column_notes(shown, context); !notes.empty()) out += comment_lines(notes);
  // What the reader must know before trusting the times stays with the table, as comments.
  for (const std::string& w : run_warnings(results)) out += "% warning: " + printable(w) + "\n";
  for (const auto& points : tables) out += "\n" + table_of(points, columns, grouping);
  return out;
}

}  // namespace convbench

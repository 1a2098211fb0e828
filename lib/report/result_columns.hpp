// The columns of the per-block result tables, once for every tabular format: the terminal and
// Markdown tables, the HTML report's tables and the LaTeX tables all show the same columns under
// the same names (--columns and --latex-columns take the same keys). Each column has its key, its
// headers (terminal words; LaTeX's grouped header and unit line), when it applies, what it means
// (the footnote says only what the shown columns mean), how a cell is written in each style and
// which default sets it is in (`--wide` is every column; the compact and LaTeX defaults are
// queries on the catalogue). Adding a column is one entry in result_columns.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "results/results.hpp"
#include "util/text_table.hpp"

namespace convbench {

// What a cell sees: its row, the baseline at the row's sweep point, and the table's mode.
struct ColumnContext {
  const ResultRow& row;
  const ResultRow& base;
  bool train;
};

struct ColumnCell {
  std::string text;
  Tone tone = Tone::plain;
};

// What a table's rows must have for a column to show anything: flags, combined with |.
enum class ColumnNeeds : unsigned {
  nothing = 0,
  measured = 1u << 0,  // times, rates, the measured peak, the status of a run
  train = 1u << 1,     // backward and step quantities
  graph = 1u << 2,     // the CUDA graph's replay (compare --graph)
};
constexpr ColumnNeeds operator|(ColumnNeeds a, ColumnNeeds b) {
  return static_cast<ColumnNeeds>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
// What a table of rows has, in the same flags: measured rows, training rows, a recorded graph.
ColumnNeeds table_has(bool measured, bool train, bool graph);

// The default column sets a column belongs to. Each set has an order of its own (the compact
// table leads with the time, the analysis with params), so a column says its place in each.
enum class ColumnSet {
  compact,           // the terminal's default for measured blocks (fits 100 columns)
  compact_network,   // ... for a measured whole network: forward GFLOP and GMAC too
  compact_analysis,  // ... for an analysis (no times)
  latex,             // the LaTeX default of a measured block (one column of an article)
  latex_analysis,    // ... of an analysis, per point or a whole sweep
  latex_sweep,       // ... of a measured block's whole sweep in one table
};
struct SetPlace {
  ColumnSet set;
  int order;  // place in the set, from 1
};

// Where a table puts a column's cells: numbers right-aligned, words left when they end the row.
enum class ColumnAlign { number, words };

// The cell of a row without counts (status unreadable): "-" ("--" in LaTeX), or the column's own.
enum class WithoutCounts { dash, own_cell };

struct ResultColumn {
  const char* key = "";
  const char* header_train = "";  // terminal, Markdown and HTML header in a training table
  const char* header_infer = "";  // ... in an inference table
  // LaTeX: adjacent columns of one group share a \multicolumn header ("time" reads Step or
  // Forward); the unit is the second header line.
  const char* latex_group = "";
  const char* latex_unit = "";
  ColumnNeeds needs = ColumnNeeds::nothing;
  ColumnAlign align = ColumnAlign::number;
  WithoutCounts without_counts = WithoutCounts::dash;
  // What the column means, for the note under the tables; "{pass}" and "{phase}" are filled in
  // (a training step / the step (forward + backward); an inference pass / the forward pass).
  // Columns that mean the same thing share a note word for word: it is said once.
  const char* note = "";
  std::vector<SetPlace> sets = {};                       // the default sets it is in (every column is in --wide)
  std::function<ColumnCell(const ColumnContext&)> text;  // terminal, Markdown, HTML
  std::function<std::string(const ColumnContext&)> latex;
};

// Every column, in the order `--wide` shows them.
const std::vector<ResultColumn>& result_columns();
// The keys of a default set, in the set's order.
std::vector<std::string> column_set(ColumnSet set);
// The keys, in that order (for --columns, --latex-columns and their help).
const std::vector<std::string>& result_column_keys();
// Throws std::invalid_argument naming the unknown key.
const ResultColumn& result_column(const std::string& key);
// Throws std::invalid_argument naming the first unknown key.
void check_result_columns(const std::vector<std::string>& keys);
// A cell of `c` for the row: the column's own text, but "-" ("--" in LaTeX) in every column but
// the status for a row that has no counts (status unreadable).
ColumnCell column_cell(const ResultColumn& c, const ColumnContext& context);
std::string column_latex(const ResultColumn& c, const ColumnContext& context);
// The variant's name as a table's first cell shows it: " (base)" after the baseline's, and the
// status after a row that has no counts (the only status an analysis row can have).
std::string variant_cell(const ResultRow& r);

// " (disturbed)" / " (noisy)" after a row that ran, empty when its times can be trusted
// (results/trust.hpp): every table says it where its reader looks, not only in the warnings.
std::string trust_suffix(const ResultRow& r);

// Whether the column has anything to show in a table that has `has` (table_has).
bool column_applies(const ResultColumn& c, ColumnNeeds has);

// What the rows of a footnote are like: which pass and phase its notes speak of.
struct NoteContext {
  bool train = false, infer = false;
};
// The notes of these columns (keys), each said once, in catalogue order, as sentences.
std::string column_notes(const std::vector<std::string>& keys, const NoteContext& context);

// A time cell of every table: "1.465 ±16.6%" (the median in ms and its noise), "-" when the row
// did not run or has no such time.
std::string time_cell(const ResultRow& r, const std::optional<TimeStats>& t);

// The peak a table shows: measured when the row has it, else predicted.
int64_t shown_peak(const ResultRow& r);

}  // namespace convbench

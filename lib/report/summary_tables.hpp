// The per-block tables of `analyze` and `compare` (terminal, Markdown, and the HTML report's
// tables) and the tidy CSV.
#pragma once

#include <string>
#include <vector>

#include "report/text_table.hpp"
#include "results/results.hpp"

namespace convbench {

enum class TableStyle { terminal, markdown };

// One block (and sweep point): its title line and its table.
struct BlockTable {
  std::string title;  // "vnet-block: input 6x16x32x32x32, float32, channels_first, train"
  TextTable table;
};

// One wide table per block and sweep point (the HTML report's, next to its plots); variants as
// rows; ratios against the block's baseline. Measured columns (times, samples/s, achieved
// TFLOP/s and GB/s, measured peak, status) appear when the rows were measured; the time-ratio
// cells carry a tone (faster / slower than the baseline).
std::vector<BlockTable> block_tables(const ResultSet& results);
// The note under the tables that says what the columns mean (empty when there are no rows).
std::string tables_footnote(const ResultSet& results);

// Which columns the terminal and Markdown tables show (the names of table_column_names()). The
// variant and any swept fields always come first.
struct TableOptions {
  std::vector<std::string> columns;        // chosen columns, in order; empty: the default
  bool wide = false;                       // every column that applies (the default of Markdown)
  std::vector<std::string> latex_columns;  // the LaTeX tables' columns (latex_table.hpp); empty: default
};
// Every column name, for --columns: params, gflop_fwd, gflop_bwd, fwd_ms, bwd_ms, step_ms,
// time_ms (step in train, forward in infer), graph_ms, samples_per_s, tflops, gbs,
// peak_measured, peak_predicted, peak (measured, else predicted), saved, params_x, flop_x,
// time_x, peak_x, status. Columns that do not apply to a table (times of an analysis, backward
// of an inference block, graph without --graph) are left out of it.
const std::vector<std::string>& table_column_names();
// Throws std::invalid_argument naming the first unknown column.
void check_table_columns(const std::vector<std::string>& names);

// One table per block (every sweep point of it, the swept fields as columns, ratios against the
// baseline at the same point). Terminal default: compact (the headline time and its ratio,
// samples/s, peak and its ratio, FLOP ratio, status; fits 100 columns for three variants);
// Markdown default: wide.
std::string format_tables(const ResultSet& results, TableStyle style);
// `colour`: green/red time ratios on a terminal (callers pass isatty(stdout)); never in files.
std::string format_tables(const ResultSet& results, TableStyle style, bool colour);
std::string format_tables(const ResultSet& results, TableStyle style, bool colour, const TableOptions& options);

// One row per block x variant x point, stable column names with units.
std::string format_csv(const ResultSet& results);

}  // namespace convbench

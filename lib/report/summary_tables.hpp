// The per-block tables of `analyze` and `compare` (terminal, Markdown, and the HTML report's
// tables).
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"
#include "util/text_table.hpp"

namespace convbench {

enum class TableStyle { terminal, markdown };

// One block (and sweep point): its title line and its table.
struct BlockTable {
  std::string title;  // "vnet-block: input 6x16x32x32x32, float32, channels_first, train"
  TextTable table;
  // What each variant builds, one line each ("standard = conv 3x3 16→32, batch_norm, relu"), from
  // the rows' structure (empty for networks and older files).
  std::vector<std::string> structure;
};

// One wide table per block and sweep point (the HTML report's, next to its plots); variants as
// rows; ratios against the block's baseline. Measured columns (times, samples/s, achieved
// TFLOP/s and GB/s, measured peak, status) appear when the rows were measured; the time-ratio
// cells carry a tone (faster / slower than the baseline).
std::vector<BlockTable> block_tables(const ResultSet& results);
// The columns (keys) some table of block_tables shows.
std::vector<std::string> block_tables_columns(const ResultSet& results);
// The note under the tables: what the shown columns (keys) mean, then the run's warnings (empty
// when there are no rows).
std::string tables_footnote(const ResultSet& results, const std::vector<std::string>& shown);

// Which columns the tables show (keys of result_columns.hpp, the same for every format). The
// variant and any swept fields always come first; columns that do not apply to a table (times of
// an analysis, backward of an inference block, graph without --graph) are left out of it.
struct TableOptions {
  std::vector<std::string> columns;        // chosen columns, in order; empty: the default
  bool wide = false;                       // every column that applies (the default of Markdown)
  std::vector<std::string> latex_columns;  // the LaTeX tables' columns; empty: its default
  bool latex_whole_sweeps = false;         // LaTeX: one table per block, every sweep point in it
};

// One table per block (every sweep point of it, the swept fields as columns, ratios against the
// baseline at the same point). Terminal default: compact (the headline time and its ratio,
// samples/s, peak and its ratio, FLOP ratio, status; fits 100 columns for three variants);
// Markdown default: wide.
std::string format_tables(const ResultSet& results, TableStyle style);
// `colour`: green/red time ratios on a terminal (callers pass isatty(stdout)); never in files.
std::string format_tables(const ResultSet& results, TableStyle style, bool colour);
std::string format_tables(const ResultSet& results, TableStyle style, bool colour, const TableOptions& options);

}  // namespace convbench

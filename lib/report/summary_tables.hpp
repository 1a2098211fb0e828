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

// One table per block and sweep point; variants as rows; ratios against the block's baseline.
// Measured columns (times, achieved TFLOP/s and GB/s, measured peak, status) appear when the
// rows were measured; the time-ratio cells carry a tone (faster / slower than the baseline).
std::vector<BlockTable> block_tables(const ResultSet& results);
// The note under the tables that says what the columns mean (empty when there are no rows).
std::string tables_footnote(const ResultSet& results);

std::string format_tables(const ResultSet& results, TableStyle style);
// `colour`: green/red time ratios on a terminal (callers pass isatty(stdout)); never in files.
std::string format_tables(const ResultSet& results, TableStyle style, bool colour);

// One row per block x variant x point, stable column names with units.
std::string format_csv(const ResultSet& results);

}  // namespace convbench

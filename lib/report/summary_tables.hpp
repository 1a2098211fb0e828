// The per-block tables of `analyze` and `compare` (terminal and Markdown) and the tidy CSV.
#pragma once

#include <string>

#include "report/results.hpp"

namespace convbench {

enum class TableStyle { terminal, markdown };

// One table per block and sweep point; variants as rows; ratios against the block's baseline.
// Measured columns appear when the rows were measured.
std::string format_tables(const ResultSet& results, TableStyle style);

// One row per block x variant x point, stable column names with units.
std::string format_csv(const ResultSet& results);

}  // namespace convbench

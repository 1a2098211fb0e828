// The tidy CSV: one row per block x variant x sweep point, every raw number a table is made of,
// under stable column names with their units (pandas and spreadsheets read it as it is).
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

std::string format_csv(const ResultSet& results);

// The fixed columns' names, in order (the swept fields follow as sweep_<field>).
std::vector<std::string> csv_column_names();

}  // namespace convbench

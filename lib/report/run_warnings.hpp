// What a reader of a result must be told before trusting its times: a device clock that fell
// while a row was timed (throttling: later samples ran on a slower device than earlier ones),
// and rows run with --graph whose capture failed. Derived from the rows alone, so `report`
// prints the same warnings `compare` did.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.hpp"
#include "results/trust.hpp"  // clock_dropped

namespace convbench {

// "sm clock 1980 -> 1755 MHz (-11.4%)", with the limits the device named, if any.
std::string clock_change_text(const ClockWindow& c);

// One line per problem of a row, each starting with its key ("block [point] / variant: ");
// empty for rows that did not run.
std::vector<std::string> row_warnings(const ResultRow& r);
// row_warnings of every row, in row order; empty when there is nothing to warn about.
std::vector<std::string> run_warnings(const ResultSet& results);

// The clocks across a run for its provenance: {"domain", "before_mhz" (first timed row's
// start), "after_mhz" (last timed row's end), "lowest_mhz", "rows_with_drop"}; null when no row
// read a clock.
nlohmann::json clock_provenance(const std::vector<ResultRow>& rows);

}  // namespace convbench

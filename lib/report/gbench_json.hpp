// Results in Google Benchmark's JSON schema (json_schema_version 1), for CI dashboards and for
// google/benchmark's tools/compare.py. Per row x timed phase, named "block/variant[/point]/phase":
//  - repetitions as Google Benchmark writes them, "iteration" entries sharing the name: the
//    samples in the order they were taken, cut into at most kGbenchMaxRepetitions consecutive
//    runs, each reporting the mean time per iteration of its samples (one sample each when there
//    are few). compare.py's Mann-Whitney U test needs repetitions (two at least, nine advised);
//    one entry, as before, ruled it out;
//  - then the aggregates, the median first: median, mean, stddev (of the samples, as every other
//    output reports them) and cv. The median leads because a few slow samples move the mean by
//    hundreds of percent while the median moves as the typical sample does.
// Times are in nanoseconds, always: compare.py prints whole numbers of the file's unit (so
// milliseconds lose every digit of a 1.3 ms time) and compares the two files' values without
// converting, so the unit must not depend on the measurement.
// Rows without timing (analyze output) and rows that did not run (status not ok) are left out.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "results/results.hpp"

namespace convbench {

inline constexpr int kGbenchMaxRepetitions = 32;

// Keys keep Google Benchmark's order (context first), hence ordered_json.
nlohmann::ordered_json results_to_gbench_json(const ResultSet& results);

// "block/variant[/point_label]/phase" (the benchmark name shared by the iteration entry and, with
// "_<aggregate>" appended, by its aggregates).
std::string gbench_run_name(const ResultRow& row, const std::string& phase);

}  // namespace convbench

// Results in Google Benchmark's JSON schema (json_schema_version 1), for CI dashboards and for
// google/benchmark's tools/compare.py: one "iteration" entry per row x timed phase, named
// "block/variant[/point]/phase", plus its aggregates (mean, median, stddev, cv) over the samples.
// Rows without timing (analyze output) and rows that did not run (status not ok) are left out.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "results/results.hpp"

namespace convbench {

// Keys keep Google Benchmark's order (context first), hence ordered_json.
nlohmann::ordered_json results_to_gbench_json(const ResultSet& results);

// "block/variant[/point_label]/phase" (the benchmark name shared by the iteration entry and, with
// "_<aggregate>" appended, by its aggregates).
std::string gbench_run_name(const ResultRow& row, const std::string& phase);

}  // namespace convbench

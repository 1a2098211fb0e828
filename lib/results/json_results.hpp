// convbench's results JSON ({"schema": "convbench.results/1", ...}): the single source of truth
// that every other format can be regenerated from (`convbench report`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "results/results.hpp"

namespace convbench {

nlohmann::json results_to_json(const ResultSet& results);
// Throws InputError (located in `file_name`) when the document is not a results file.
ResultSet results_from_json(const nlohmann::json& doc, const std::string& file_name);
ResultSet load_results_file(const std::string& path);

}  // namespace convbench

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

// A row's host_activity object, written and read back as a row's is (checked: InputError located
// in `file_name`). The cpu's limits keep one in their cache (pipeline/device_limits_choice.hpp).
nlohmann::json host_activity_to_json(const HostActivity& activity);
HostActivity host_activity_from_json(const nlohmann::json& j, const std::string& file_name);

}  // namespace convbench

// `history export`: every measurement with its series key and run, one record per measurement,
// as CSV (RFC 4180, a header line; raw samples as a JSON text column) or JSON (a list of records,
// raw samples as lists): what pandas.read_csv / pandas.read_json(orient="records") read.
#pragma once

#include <string>

#include "history/history_store.hpp"

namespace convbench {

// `filter` as history_tables.hpp's select_series.
std::string export_history(HistoryReader& history, const std::string& format, const std::string& filter);

}  // namespace convbench

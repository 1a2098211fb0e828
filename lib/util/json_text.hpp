// JSON text for every file convbench writes (results, shards, plans, the resolved spec, the
// history's records). nlohmann::json's dump() throws on a string that is not UTF-8, and a dump
// happens after the work: a stray byte that got past the checks would lose a whole measurement.
// The names that can hold such bytes are refused (a spec must be UTF-8) or escaped when recorded
// (escape_invalid_utf8: host name, paths, the command line) before any work; this is the safety
// net behind them: a stray byte becomes U+FFFD instead of an exception.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace convbench {

// dump(indent), with bytes that are not UTF-8 replaced by U+FFFD rather than thrown about.
template <class Json>
std::string json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace convbench

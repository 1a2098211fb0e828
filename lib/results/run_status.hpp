// How a measured run ended, as a result row records it. `ok` rows carry times and memory; the
// others carry a message and no measurements. The names are the results schema's strings.
#pragma once

#include <array>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace convbench {

enum class RunStatus {
  ok,           // measured
  oom,          // did not fit the device's (or --memory-limit's, or the host's) memory
  unsupported,  // the backend has no implementation for an op or a setting of it
  error,        // anything else failed; the message says what
  // The variant's own file could not be read (an ONNX file convbench cannot translate, or one that
  // does not fit the block): the row has no counts either, only the message (spec/spec.hpp).
  unreadable,
};

inline constexpr std::array<RunStatus, 5> kRunStatuses = {RunStatus::ok, RunStatus::oom, RunStatus::unsupported,
                                                          RunStatus::error, RunStatus::unreadable};

// "ok" | "oom" | "unsupported" | "error" | "unreadable": the JSON and every output's spelling.
std::string to_string(RunStatus status);
std::optional<RunStatus> parse_run_status(std::string_view text);
std::ostream& operator<<(std::ostream& out, RunStatus status);  // for test messages

// The row has counts and a predicted memory: every status but unreadable.
inline bool counted(RunStatus status) { return status != RunStatus::unreadable; }

}  // namespace convbench

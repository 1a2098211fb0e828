#include "results/run_status.hpp"

namespace convbench {

std::string to_string(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return "ok";
    case RunStatus::oom: return "oom";
    case RunStatus::unsupported: return "unsupported";
    case RunStatus::error: return "error";
    case RunStatus::unreadable: return "unreadable";
  }
  return "error";  // unreachable: every enumerator is handled above (-Wswitch checks it)
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (RunStatus s : kRunStatuses)
    if (to_string(s) == text) return s;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& out, RunStatus status) { return out << to_string(status); }

}  // namespace convbench

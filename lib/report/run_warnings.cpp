#include "report/run_warnings.hpp"

#include <algorithm>
#include <limits>

#include "results/row_pairing.hpp"
#include "util/text_table.hpp"

namespace convbench {

std::string clock_change_text(const ClockWindow& c) {
  std::string text =
      c.domain + " clock " + format_fixed(c.before_mhz, 0) + " -> " + format_fixed(c.after_mhz, 0) + " MHz";
  if (c.before_mhz > 0) {
    const double change = (c.after_mhz / c.before_mhz - 1.0) * 100.0;
    text += " (" + std::string(change >= 0 ? "+" : "") + format_fixed(change, 1) + "%)";
  }
  if (!c.limits_after.empty()) {
    text += ", limited by ";
    for (size_t i = 0; i < c.limits_after.size(); ++i) text += (i ? ", " : "") + c.limits_after[i];
  }
  return text;
}

std::vector<std::string> row_warnings(const ResultRow& r) {
  std::vector<std::string> out;
  if (r.status != RunStatus::ok) return out;
  if (r.clock && clock_dropped(*r.clock))
    out.push_back(key_of(r).text() + ": " + clock_change_text(*r.clock) +
                  " while timing: the device slowed down under the run, so its later samples are slower than "
                  "the device's sustained speed at the starting clock; let it cool or fix its clocks, then re-run");
  if (!r.graph_message.empty()) out.push_back(key_of(r).text() + ": no graph replay: " + r.graph_message);
  if (const TrustAssessment trust = assess_trust(r); trust.level != Trust::ok) {
    std::string line = key_of(r).text() + ": " + to_string(trust.level) + ": ";
    for (size_t i = 0; i < trust.evidence.size(); ++i) line += (i ? "; " : "") + trust.evidence[i];
    line +=
        trust.level == Trust::disturbed
            ? ". Do not use these times: re-run on an idle machine (see lib/measure/README.md, \"Quiet measurements\")"
            : ". Compare these times with care";
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<std::string> run_warnings(const ResultSet& results) {
  std::vector<std::string> out;
  if (const auto interrupted = interruption_of(results))
    out.push_back("the run was " + interruption_text(*interrupted) +
                  ": the rows shown are those that finished, and a ratio to a baseline that did not run is missing");
  for (const ResultRow& r : results.rows)
    for (std::string& w : row_warnings(r)) out.push_back(std::move(w));
  return out;
}

nlohmann::json clock_provenance(const std::vector<ResultRow>& rows) {
  const ClockWindow* first = nullptr;
  const ClockWindow* last = nullptr;
  double lowest = std::numeric_limits<double>::infinity();
  int drops = 0;
  for (const ResultRow& r : rows) {
    if (!r.clock) continue;
    const ClockWindow& c = *r.clock;
    if (!first) first = &c;
    last = &c;
    lowest = std::min({lowest, c.before_mhz, c.after_mhz});
    drops += clock_dropped(c);
  }
  if (!first) return nullptr;
  return {{"domain", first->domain}, {"before_mhz", first->before_mhz}, {"after_mhz", last->after_mhz},
          {"lowest_mhz", lowest},    {"rows_with_drop", drops},         {"drop_threshold", kClockDropWarnFraction}};
}

}  // namespace convbench

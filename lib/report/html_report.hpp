// The HTML report: one self-contained file (inline CSS and SVG drawn by convbench; no scripts, no
// external references). Per block: the results table, time vs FLOPs (log-log, one labelled point
// per variant), the memory at the peak by category (stacked bars; measured when the file has it,
// else predicted), and a roofline (achieved FLOP/s against arithmetic intensity under the
// device's limits when they are known). With --against, the side-by-side comparison follows.
#pragma once

#include <string>

#include "report/peer_comparison.hpp"
#include "results/results.hpp"

namespace convbench {

// `against` may be null.
std::string format_html(const ResultSet& results, const PeerComparison* against = nullptr);

}  // namespace convbench

// LaTeX tables for papers: one booktabs table per block (and sweep point), plain tabular (no
// siunitx), names escaped, units in the headers. Needs only \usepackage{booktabs}; \input it.
#pragma once

#include <string>

#include "results/results.hpp"

namespace convbench {

std::string format_latex(const ResultSet& results);

}  // namespace convbench

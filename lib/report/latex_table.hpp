// LaTeX tables for papers: one booktabs table per block (and sweep point), plain tabular (no
// siunitx), names escaped, grouped headers (\multicolumn over \cmidrule) with units on the
// second line, numbers to 3 significant digits. By default a table fits one column of a
// one-column article: measured, the headline time (ms) and its ratio, peak memory (MiB) and its
// ratio, FLOP and parameter ratios; an analysis, parameters, the forward pass's GFLOP and GMAC,
// peak and the ratios. The header comments say what the shown columns mean.
// Needs only \usepackage{booktabs}; \input it.
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

std::string format_latex(const ResultSet& results);
// With chosen columns (keys of result_columns.hpp, the terminal's names, in order; empty: the
// default). Columns that do not apply (times of an analysis) are left out.
std::string format_latex(const ResultSet& results, const std::vector<std::string>& columns);

}  // namespace convbench

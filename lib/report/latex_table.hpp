// LaTeX tables for papers: one booktabs table per block (and sweep point), plain tabular (no
// siunitx), names escaped, grouped headers (\multicolumn over \cmidrule) with units on the
// second line, numbers to 3 significant digits. By default a table fits one column of a
// one-column article: measured, the headline time (ms) and its ratio, peak memory (MiB) and its
// ratio, FLOP and parameter ratios; an analysis, parameters, the forward pass's GFLOP and GMAC,
// peak and the ratios. The header comments say what the shown columns mean.
// With LatexGrouping::per_block, a swept block is one table: its rows are variant x sweep point
// (the point in the first column, once per point), every ratio against the baseline at the same
// point, and by default absolute columns (params, forward GFLOP, the headline ms, peak MiB) beside
// the ratios, so that a whole sweep reads as one table in a paper.
// Captions describe the columns shown: ratios are explained only when a ratio column is there.
// Needs only \usepackage{booktabs}; \input it.
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

enum class LatexGrouping { per_point, per_block };

std::string format_latex(const ResultSet& results);
// With chosen columns (keys of result_columns.hpp, the terminal's names, in order; empty: the
// default). Columns that do not apply (times of an analysis) are left out.
std::string format_latex(const ResultSet& results, const std::vector<std::string>& columns,
                         LatexGrouping grouping = LatexGrouping::per_point);

}  // namespace convbench

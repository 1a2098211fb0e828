// LaTeX tables for papers: one booktabs table per block (and sweep point), plain tabular (no
// siunitx), names escaped, grouped headers (\multicolumn over \cmidrule) with units on the
// second line, numbers to 3 significant digits. By default a table fits one column of a
// one-column article: measured, the headline time (ms) and its ratio, peak memory (MiB) and its
// ratio, FLOP and parameter ratios; an analysis, parameters, GFLOP, peak and the ratios.
// Needs only \usepackage{booktabs}; \input it.
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

std::string format_latex(const ResultSet& results);
// With chosen columns (names of latex_column_names(), in order; empty: the default). Columns that
// do not apply (times of an analysis) are left out.
std::string format_latex(const ResultSet& results, const std::vector<std::string>& columns);
// params, gflop, flop_x, params_x, fwd, bwd, time (step in train, forward in infer), noise,
// time_x, graph, samples_per_s, tflops, peak (measured, else predicted), peak_x, saved.
const std::vector<std::string>& latex_column_names();
// Throws std::invalid_argument naming the first unknown column.
void check_latex_columns(const std::vector<std::string>& names);

}  // namespace convbench

// Where a series of per-run medians changes level: a piecewise-constant fit by least squares with
// a penalty per change point (a BIC-like penalty, as asv's step detection), found exactly by
// optimal partitioning with PELT's pruning (Killick, Fearnhead & Eckley 2012), so that it stays
// fast over thousands of runs. A slow drift made of several small steps shows as steps, which one
// new run against its recent neighbours cannot show.
#pragma once

#include <vector>

namespace convbench {

struct StepFitOptions {
  // Penalty per change point, in units of the noise variance: penalty_per_log_n * log(n) (BIC
  // uses 1 per parameter; a change point adds a level and a position, so 2, made stricter to keep
  // pure noise from splitting over hundreds of series).
  double penalty_per_log_n = 3.0;
  int min_segment = 2;  // runs in the shortest level the fit may place
};

struct Segment {
  int begin = 0, end = 0;  // runs [begin, end)
  double level = 0;        // the mean of the medians in it
};

struct StepFit {
  std::vector<Segment> segments;  // cover [0, n) in order; one segment when nothing changed
  double noise_sd = 0;            // the noise scale the penalty used
};

// The noise scale of a series: the median absolute deviation of successive differences, scaled
// to a standard deviation (1.4826 / sqrt 2), so that the steps themselves barely move it.
double successive_difference_sd(const std::vector<double>& values);

// Fewer than 2 * min_segment values, or no noise at all: one segment.
StepFit fit_steps(const std::vector<double>& values, const StepFitOptions& options = {});

}  // namespace convbench

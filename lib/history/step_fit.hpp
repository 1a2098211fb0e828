// Where a series of per-run medians changes level: a piecewise-constant fit by least squares with
// a penalty per change point (a BIC-like penalty, as asv's step detection), found exactly by
// optimal partitioning with PELT's pruning (Killick, Fearnhead & Eckley 2012), so that it stays
// fast over thousands of runs. A slow drift made of several small steps shows as steps, which one
// new run against its recent neighbours cannot show.
#pragma once

#include <vector>

namespace convbench {

struct StepFitOptions {
  // Penalty per change point, in units of the noise variance: penalty_per_log_n * log(n). BIC
  // charges 1 per parameter, and a change point adds two (a level and a position); that splits
  // pure noise too often when hundreds of series are fitted and the noise is itself estimated:
  // over 40 runs of medians of 15 samples, pure noise split 5.3% of the time with 3, 1.0% with
  // 5 and 0.7% with 6 (300 simulated series each), while a 2% step in 0.65% noise still gains
  // 95 noise variances against the 22 that 6 x log(40) charges.
  double penalty_per_log_n = 6.0;
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

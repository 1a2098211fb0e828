// How the backend tests decide that two results agree: the relative error with a floor, and the
// rule for whole training steps in reduced precision, where the reference and the backend under
// test may round a ReLU input to opposite sides of zero. One place for both, shared by
// cpu_backend_test.cpp and cuda_backend_test.cpp and tested on its own in
// value_agreement_test.cpp (on any machine: the GPU tests cannot show the rule failing).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace convbench::testing {

using Values = std::vector<double>;

inline double l2_norm(const Values& v) {
  double s = 0.0;
  for (double x : v)
    if (!std::isnan(x)) s += x * x;
  return std::sqrt(s);
}

// ||actual - expected|| / max(||expected||, floor). The floor is for results that are zero up
// to rounding (a conv bias right before a norm): judged against the scale they belong with, not
// against their own noise. When expected is all zeros and there is no floor, the absolute
// distance: a result that should be zero passes only by being (nearly) zero. Infinity when the
// sizes differ or actual holds a NaN where expected does not (an element never written).
inline double relative_error(const Values& actual, const Values& expected, double floor = 0.0) {
  if (actual.size() != expected.size()) return std::numeric_limits<double>::infinity();
  double diff = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(actual[i]) != std::isnan(expected[i])) return std::numeric_limits<double>::infinity();
    if (std::isnan(expected[i])) continue;
    diff += (actual[i] - expected[i]) * (actual[i] - expected[i]);
  }
  diff = std::sqrt(diff);
  const double scale = std::max(l2_norm(expected), floor);
  return scale > 0.0 ? diff / scale : diff;
}

// The verdict on one result of a reduced-precision training step (bfloat16, float16, tf32), got
// by the backend under test (`actual`), the reference backend in the same dtype (`reference`)
// and, where the comparison needs it, the reference in float64 (`truth`, computed only then).
//
//  1. Within `tolerance` of the reference: agrees.
//  2. Otherwise no further from the truth than 3x the reference's own distance: both rounded,
//     neither is wrong (rounding at every op boundary can shift a cancelling sum by percents).
//  3. Otherwise a ReLU input that crossed zero in one backend and not the other: that moves one
//     element of a norm's grad-beta or grad-gamma (one channel) by one summand, which can be
//     most of a cancelling sum, while the reference happens to sit next to the truth. So the
//     disagreement may sit in at most max(2, n/32) elements (the flipped channels), each no
//     further from the truth than the result's own scale (max(||truth||, floor): one summand
//     of a sum is not larger than that, and NaN or garbage is); with those elements set to the
//     reference's values, rules 1 or 2 must hold for the rest. A wrong kernel spreads its error
//     over many elements and fails; a kernel wrong in a single channel would pass here, which is
//     why every op is also compared alone on identical inputs (GpuOps), where no flip can occur.
// Returns nullopt when the result agrees, else the numbers that say why not.
struct StepAgreement {
  double tolerance = 1e-2;
  double floor = 0.0;
  double truth_factor = 3.0;  // rule 2
};

inline size_t flip_allowance(size_t n) { return std::max<size_t>(2, n / 32); }

template <class TruthGetter>
std::optional<std::string> reduced_precision_disagreement(const Values& actual, const Values& reference,
                                                          TruthGetter&& get_truth, const StepAgreement& rule) {
  const double err = relative_error(actual, reference, rule.floor);
  if (err <= rule.tolerance) return std::nullopt;
  std::ostringstream why;
  why << "relative error " << err << " > " << rule.tolerance << " to the reference";
  const Values* truth = get_truth();
  if (truth == nullptr || truth->size() != actual.size()) return why.str() + " (no float64 step to judge by)";
  const double ours = relative_error(actual, *truth, rule.floor);
  const double theirs = relative_error(reference, *truth, rule.floor);
  if (ours <= rule.truth_factor * theirs) return std::nullopt;
  why << "; " << ours << " to the float64 step, more than " << rule.truth_factor << "x the reference's own " << theirs;

  // Rule 3: set aside the elements where the two backends differ most.
  std::vector<size_t> order(actual.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto gap = [&](size_t i) {
    const double d = std::abs(actual[i] - reference[i]);
    return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return gap(a) > gap(b); });
  const size_t allowed = std::min(flip_allowance(actual.size()), actual.size());
  const double scale = std::max(l2_norm(*truth), rule.floor);
  Values rest = actual;
  size_t set_aside = 0;
  for (size_t k = 0; k < allowed && gap(order[k]) > 0.0; ++k) {
    const size_t i = order[k];
    const double off = std::abs(actual[i] - (*truth)[i]);
    if (!(off <= scale)) {
      why << "; element " << i << " is " << off << " from the float64 step, beyond the result's scale " << scale;
      return why.str();
    }
    rest[i] = reference[i];
    ++set_aside;
  }
  const double rest_err = relative_error(rest, reference, rule.floor);
  if (rest_err <= rule.tolerance || relative_error(rest, *truth, rule.floor) <= rule.truth_factor * theirs)
    return std::nullopt;
  why << "; without its " << set_aside << " most distant elements (at most " << allowed << " of " << actual.size()
      << " may be flipped ReLU inputs) still " << rest_err;
  return why.str();
}

}  // namespace convbench::testing

// The rules by which the backend tests judge agreement (value_agreement.hpp), shown on the host:
// the GPU tests use them but cannot show them failing. The reduced-precision rule is tried on a
// simulated norm's grad-beta where one backend's rounding moved a ReLU input across zero, and on
// the ways a wrong kernel differs (everywhere, in the channel order, NaN, garbage in one place).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "value_agreement.hpp"

namespace convbench::testing {
namespace {

TEST(ValueAgreement, RelativeErrorIsAgainstTheLargerOfTheNormAndTheFloor) {
  EXPECT_DOUBLE_EQ(relative_error({1.0, 2.0}, {1.0, 2.0}), 0.0);
  EXPECT_NEAR(relative_error({3.0, 4.5}, {3.0, 4.0}), 0.1, 1e-12);  // 0.5 / 5
  // A floor above the norm: the difference over the floor.
  EXPECT_NEAR(relative_error({0.0, 0.5}, {0.0, 0.0}, 10.0), 0.05, 1e-12);
  // A floor below the norm changes nothing.
  EXPECT_NEAR(relative_error({3.0, 4.5}, {3.0, 4.0}, 1.0), 0.1, 1e-12);
}

TEST(ValueAgreement, AnAllZeroExpectationDoesNotPassWhateverComesBack) {
  const Values zeros(8, 0.0);
  // Without a floor: the absolute distance.
  EXPECT_EQ(relative_error(zeros, zeros), 0.0);
  EXPECT_GT(relative_error(Values(8, 3.0), zeros), 1.0);
  // With a floor: the distance over the floor (it used to be scaled by the zero norm: always 0).
  EXPECT_EQ(relative_error(zeros, zeros, 2.0), 0.0);
  EXPECT_GT(relative_error(Values(8, 3.0), zeros, 2.0), 1.0);
  EXPECT_GT(relative_error(Values(8, 1e-3), zeros, 1e-3), 1e-5);
}

TEST(ValueAgreement, SizesThatDifferAndUnwrittenElementsAreInfinitelyFar) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(relative_error({1.0}, {1.0, 2.0}), inf);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(relative_error({1.0, nan}, {1.0, 2.0}), inf);
  EXPECT_EQ(relative_error({1.0, 2.0}, {1.0, nan}), inf);
  EXPECT_EQ(relative_error({1.0, nan}, {1.0, nan}), 0.0);  // a position neither wrote
}

// A norm's grad-beta over `channels` channels, each the sum of `summands` upstream gradients
// masked by a ReLU (summand k of channel c counts where its pre-activation is > 0), as computed
// by three backends: in float64 (truth), and twice with every summand rounded to about
// bfloat16's precision (8 bits), once with the pre-activation nearest zero flipped (`flip`).
struct SimulatedGradBeta {
  Values truth, reference, flipped;
};

SimulatedGradBeta simulate(int channels, int summands, bool flip) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto round8 = [](double v, double jitter) {  // keep 8 significant bits, plus a backend's own jitter
    if (v == 0.0) return 0.0;
    const double step = std::ldexp(1.0, std::ilogb(v) - 8);
    return std::round(v / step + jitter) * step;
  };
  SimulatedGradBeta s;
  double nearest = 2.0;
  int nearest_c = 0;
  double nearest_g = 0.0;
  for (int c = 0; c < channels; ++c) {
    double t = 0.0, r = 0.0, f = 0.0;
    for (int k = 0; k < summands; ++k) {
      const double g = uniform(rng), pre = uniform(rng);
      if (pre > 0) {
        t += g;
        r += round8(g, 0.0);
        f += round8(g, 0.3);
      }
      if (std::abs(pre) < nearest && std::abs(g) > 0.5) {
        nearest = std::abs(pre);
        nearest_c = c;
        nearest_g = pre > 0 ? -g : g;  // the flip removes a counted summand or adds one
      }
    }
    s.truth.push_back(t);
    s.reference.push_back(r);
    s.flipped.push_back(f);
  }
  if (flip) s.flipped[static_cast<size_t>(nearest_c)] += nearest_g;
  return s;
}

std::optional<std::string> judge(const Values& actual, const Values& reference, const Values& truth,
                                 double tolerance = 1e-2) {
  StepAgreement rule;
  rule.tolerance = tolerance;
  return reduced_precision_disagreement(
      actual, reference, [&truth] { return &truth; }, rule);
}

TEST(ValueAgreement, AReluFlipInOneBackendPassesWhereTheOldRuleFailedIt) {
  const SimulatedGradBeta s = simulate(16, 24, true);
  const double to_reference = relative_error(s.flipped, s.reference);
  const double ours = relative_error(s.flipped, s.truth), theirs = relative_error(s.reference, s.truth);
  // The situation the H200 run met: beyond bfloat16's tolerance, and far beyond 3x the
  // reference's own distance to float64, which is nearly nothing.
  ASSERT_GT(to_reference, 1e-2);
  ASSERT_GT(ours, 3.0 * theirs);
  const auto verdict = judge(s.flipped, s.reference, s.truth);
  EXPECT_FALSE(verdict) << *verdict;
  // Without the flip the two roundings agree within the tolerance to begin with.
  const SimulatedGradBeta plain = simulate(16, 24, false);
  EXPECT_LE(relative_error(plain.flipped, plain.reference), 1e-2);
}

TEST(ValueAgreement, AWrongKernelStillFailsTheReducedPrecisionRule) {
  const SimulatedGradBeta s = simulate(16, 24, false);
  // Off by 5% everywhere (a wrong scale, a missing term in every channel).
  Values scaled = s.reference;
  for (double& v : scaled) v *= 1.05;
  EXPECT_TRUE(judge(scaled, s.reference, s.truth));
  // Channels in the wrong order.
  Values rotated(s.reference.begin() + 1, s.reference.end());
  rotated.push_back(s.reference.front());
  EXPECT_TRUE(judge(rotated, s.reference, s.truth));
  // A NaN or garbage in one element: beyond any one summand.
  Values one_nan = s.reference;
  one_nan[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(judge(one_nan, s.reference, s.truth));
  Values garbage = s.reference;
  garbage[5] = 1e6;
  const auto verdict = judge(garbage, s.reference, s.truth);
  ASSERT_TRUE(verdict);
  EXPECT_NE(verdict->find("beyond the result's scale"), std::string::npos) << *verdict;
  // More flipped-looking elements than a few channels' worth: 4 of 16 moved by a summand each.
  Values many = s.reference;
  for (size_t c : {1, 4, 7, 10}) many[c] += 0.9;
  EXPECT_TRUE(judge(many, s.reference, s.truth));
}

TEST(ValueAgreement, TheFloat64StepIsComputedOnlyWhenTheToleranceIsNotMet) {
  const SimulatedGradBeta s = simulate(16, 24, false);
  int computed = 0;
  auto truth = [&]() -> const Values* {
    ++computed;
    return &s.truth;
  };
  StepAgreement rule;
  EXPECT_FALSE(reduced_precision_disagreement(s.reference, s.reference, truth, rule));
  EXPECT_EQ(computed, 0);
  Values off = s.reference;
  off[0] += 0.9;
  (void)reduced_precision_disagreement(off, s.reference, truth, rule);
  EXPECT_EQ(computed, 1);
}

TEST(ValueAgreement, WithoutAFloat64StepBeyondTheToleranceIsAFailure) {
  StepAgreement rule;
  rule.tolerance = 1e-5;  // float32: no float64 step is computed
  const auto verdict = reduced_precision_disagreement(
      {1.0, 2.0}, {1.0, 2.001}, [] { return nullptr; }, rule);
  ASSERT_TRUE(verdict);
  EXPECT_NE(verdict->find("no float64 step"), std::string::npos) << *verdict;
}

}  // namespace
}  // namespace convbench::testing

// Statistics and the stopping rule on synthetic sample streams with a simulated clock.
#include <gtest/gtest.h>

#include <cmath>

#include "measure/stopping_rule.hpp"
#include "results/sample_stats.hpp"

namespace convbench {
namespace {

// A stream of sample times; the clock advances by each sample's duration plus `overhead_s`.
struct SyntheticStream {
  std::vector<double> pattern_ms;
  double overhead_s = 0.0;
  double clock_s = 0.0;
  size_t calls = 0;

  double sample() {
    const double t = pattern_ms[calls++ % pattern_ms.size()];
    clock_s += t / 1000.0 + overhead_s;
    return t;
  }
};

TimeStats run(SyntheticStream& s, const MeasureOptions& o) {
  return measure_until_stable([&] { return s.sample(); }, o, [&] { return s.clock_s; });
}

TEST(SampleStats, QuantilesInterpolateLikeNumpy) {
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 3.25);
  const TimeStats t = summarize(v, "noise");
  EXPECT_DOUBLE_EQ(t.min, 1);
  EXPECT_DOUBLE_EQ(t.max, 4);
  EXPECT_DOUBLE_EQ(t.mean, 2.5);
  // sample stdev sqrt(5/3) over mean 2.5
  EXPECT_NEAR(t.noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_EQ(t.samples(), 4);
}

TEST(StoppingRule, QuietStreamStopsAtMinTimeAndMinSamples) {
  SyntheticStream s{{10.0}};
  MeasureOptions o;  // 0.5% noise, 0.5 s, 10 samples, 15 s
  const TimeStats t = run(s, o);
  EXPECT_TRUE(t.noise_met);
  // 10 ms samples: 0.5 s of measured time needs 50 samples (more than min_samples).
  EXPECT_EQ(t.samples(), 50);
  EXPECT_DOUBLE_EQ(t.median, 10.0);
}

TEST(StoppingRule, SlowSamplesStopAtMinSamples) {
  SyntheticStream s{{200.0}};
  const TimeStats t = run(s, MeasureOptions{});
  EXPECT_EQ(t.samples(), 10);
  EXPECT_TRUE(t.noise_met);
}

TEST(StoppingRule, NoisyStreamRunsUntilTheTimeoutAndSaysSo) {
  SyntheticStream s{{10.0, 12.0}};  // ~9% noise forever
  MeasureOptions o;
  o.timeout_s = 2.0;
  const TimeStats t = run(s, o);
  EXPECT_FALSE(t.noise_met);
  // 2 s of 11 ms average samples (the clock starts after warm-up).
  EXPECT_GE(t.samples(), 180);
  EXPECT_LE(t.samples(), 185);
  EXPECT_NEAR(t.noise, 0.0909, 0.001);
}

TEST(StoppingRule, AnEarlyOutlierIsAcceptedOnceTheMedianIsPinned) {
  // One early outlier, then a stable stream: the spread stays above 0.5% for hundreds of samples,
  // but the median is exact from the start, so sampling stops at the minimum time and count.
  SyntheticStream s{{10.0}};
  s.pattern_ms = std::vector<double>(400, 10.0);
  s.pattern_ms[3] = 11.0;  // the 4th call is warm-up or an early sample
  MeasureOptions o;
  const TimeStats t = run(s, o);
  EXPECT_TRUE(t.noise_met);
  EXPECT_DOUBLE_EQ(t.median, 10.0);
  EXPECT_EQ(t.samples(), 50);
  EXPECT_EQ(t.stop, t.noise <= 0.005 ? "noise" : "precision");
}

TEST(StoppingRule, WarmUpRunsUntilTwoRunsAgree) {
  // A cold first run (100 ms), a warming second (50 ms), then steady 10 ms.
  SyntheticStream s{{100.0, 50.0, 10.0, 10.0}};
  s.pattern_ms.resize(1000, 10.0);
  MeasureOptions o;
  o.warmup_runs = 1;
  const TimeStats t = run(s, o);
  EXPECT_DOUBLE_EQ(t.max, 10.0);  // neither warm-up time reached the samples
}

}  // namespace
}  // namespace convbench

namespace convbench {
namespace {

TEST(StoppingRule, WarmedUpIsCalledOnceBetweenTheWarmUpAndTheFirstSample) {
  SyntheticStream s{{10.0, 10.0, 10.0}};
  MeasureOptions o;
  o.min_samples = 4;
  o.min_time_s = 0;
  o.warmup_runs = 3;
  std::vector<size_t> calls_at_warm;
  const TimeStats t = measure_until_stable([&] { return s.sample(); }, o, [&] { return s.clock_s; },
                                           [&] { calls_at_warm.push_back(s.calls); });
  EXPECT_EQ(calls_at_warm, std::vector<size_t>{3});
  EXPECT_EQ(t.samples(), static_cast<int>(s.calls) - 3);
}

}  // namespace
}  // namespace convbench

namespace convbench {
namespace {

TEST(SampleStats, MedianPrecisionIsTheConfidenceIntervalOfTheMedianOverIt) {
  // 100 samples 1..100: ranks floor(50 - 9.8) = 40 and ceil(50 + 9.8 + 1) = 61, so the interval
  // is [40, 61] around the median 50.5.
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_NEAR(median_precision(v), (61.0 - 40.0) / (2.0 * 50.5), 1e-12);
  EXPECT_TRUE(std::isinf(median_precision({1.0})));
}

TEST(StoppingRule, ASpreadThatNeverSettlesStopsOnceTheMedianIsKnownPrecisely) {
  // A CPU-like stream: a 10 ms base with 3% spread that more samples do not reduce. The noise
  // rule alone would run to the timeout; the median's interval reaches 0.5% after a few hundred.
  SyntheticStream s{{}};
  for (int i = 0; i < 1000; ++i) s.pattern_ms.push_back(10.0 * (1.0 + 0.03 * std::sin(i * 0.731)));
  MeasureOptions o;
  const TimeStats t = run(s, o);
  EXPECT_EQ(t.stop, "precision");
  EXPECT_TRUE(t.noise_met);
  EXPECT_GT(t.noise, 0.015);  // the spread is reported as it is
  EXPECT_LE(median_precision(t.raw_ms), 0.005);
  EXPECT_LT(t.samples(), 1000);  // well before the 15 s timeout (1500 samples)
}

TEST(StoppingRule, TwoModesNeverPinTheMedianAndRunToTheTimeout) {
  SyntheticStream s{{10.0, 12.0}};
  MeasureOptions o;
  o.timeout_s = 2.0;
  const TimeStats t = run(s, o);
  EXPECT_EQ(t.stop, "timeout");
  EXPECT_FALSE(t.noise_met);
}

}  // namespace
}  // namespace convbench

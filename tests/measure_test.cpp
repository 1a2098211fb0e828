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
  const TimeStats t = summarize(v, true);
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

TEST(StoppingRule, NoiseSettlingAfterOutliersIsAccepted) {
  // One early outlier, then a stable stream: the rule waits until the noise falls below 0.5%.
  SyntheticStream s{{10.0}};
  s.pattern_ms = std::vector<double>(400, 10.0);
  s.pattern_ms[3] = 11.0;  // the 4th call is warm-up or an early sample
  MeasureOptions o;
  const TimeStats t = run(s, o);
  EXPECT_TRUE(t.noise_met);
  EXPECT_LE(t.noise, 0.005);
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

// The trust of a row (results/trust.hpp) from synthetic evidence, and the parsers of the kernel's
// accounting the runner reads (measure/host_activity.hpp) on recorded texts.
#include <gtest/gtest.h>

#include <sstream>

#include "measure/host_activity.hpp"
#include "report/run_warnings.hpp"
#include "results/json_results.hpp"
#include "results/sample_stats.hpp"
#include "results/trust.hpp"

namespace convbench {
namespace {

TimeStats stats_of(std::vector<double> raw) { return summarize(raw, "timeout"); }

ResultRow timed_row(std::vector<double> fwd, std::vector<double> bwd, std::vector<double> step) {
  ResultRow r;
  r.block = "b";
  r.variant = "v";
  r.mode = "train";
  r.device = "cpu";
  r.forward = stats_of(std::move(fwd));
  r.backward = stats_of(std::move(bwd));
  r.step = stats_of(std::move(step));
  return r;
}

std::vector<double> around(double ms, int n = 20) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(ms * (1.0 + 0.01 * (i % 5)));
  return v;
}

HostActivity quiet_host() {
  HostActivity a;
  a.wall_s = 10;
  a.cpu_pressure_share = 0.004;
  a.steal_share = 0.0;
  a.threads = 2;
  a.cpus = 2;
  return a;
}

TEST(Trust, QuietRowWithTidySamplesIsOk) {
  ResultRow r = timed_row(around(1.0), around(2.0), around(3.0));
  r.activity = quiet_host();
  const TrustAssessment t = assess_trust(r);
  EXPECT_EQ(t.level, Trust::ok);
  EXPECT_TRUE(t.evidence.empty());
}

TEST(Trust, CpuPressureGradesNoisyThenDisturbed) {
  ResultRow r = timed_row(around(1.0), around(2.0), around(3.0));
  r.activity = quiet_host();
  r.activity->cpu_pressure_share = 0.08;
  EXPECT_EQ(assess_trust(r).level, Trust::noisy);
  r.activity->cpu_pressure_share = 0.43;
  const TrustAssessment t = assess_trust(r);
  EXPECT_EQ(t.level, Trust::disturbed);
  ASSERT_EQ(t.evidence.size(), 1u);
  EXPECT_EQ(t.evidence[0],
            "a runnable task waited for a CPU 43% of the time (this run computed on all 2 CPUs: if nothing else was "
            "running, try --threads 1)");
  // With a CPU left over, the waiting was someone else's: no flag to suggest.
  r.activity->cpus = 4;
  EXPECT_EQ(assess_trust(r).evidence.at(0), "a runnable task waited for a CPU 43% of the time");
}

TEST(Trust, OversubscribedThreadsAreNamed) {
  ResultRow r = timed_row(around(1.0), around(2.0), around(3.0));
  r.activity = quiet_host();
  r.activity->threads = 8;
  r.activity->cpu_pressure_share = 0.9;
  const TrustAssessment t = assess_trust(r);
  ASSERT_FALSE(t.evidence.empty());
  EXPECT_NE(t.evidence[0].find("8 threads on 2 CPUs (try --threads 2)"), std::string::npos) << t.evidence[0];
}

TEST(Trust, StealAndOtherGpuProcessesDisturb) {
  ResultRow r = timed_row(around(1.0), around(2.0), around(3.0));
  r.activity = quiet_host();
  r.activity->steal_share = 0.3;
  EXPECT_EQ(assess_trust(r).level, Trust::disturbed);
  r.activity = quiet_host();
  r.activity->gpu_other_processes = 2;
  const TrustAssessment t = assess_trust(r);
  EXPECT_EQ(t.level, Trust::disturbed);
  EXPECT_EQ(t.evidence.at(0), "2 other process(es) held the GPU while it was timed");
}

TEST(Trust, BimodalSamplesWhoseMedianIsSlowAreDisturbed) {
  // The shape seen under load on a 2-core VM: most samples a scheduler tick or more late.
  std::vector<double> step;
  for (int i = 0; i < 8; ++i) step.push_back(0.12);
  for (int i = 0; i < 12; ++i) step.push_back(236.0);
  ResultRow r = timed_row(around(0.1), around(0.15), step);
  const TrustAssessment t = assess_trust(r);
  EXPECT_EQ(t.level, Trust::disturbed);
  EXPECT_NE(t.evidence.at(0).find("step median"), std::string::npos);
}

TEST(Trust, AHeavyTailAloneIsNoisyAndWithABusyMachineDisturbed) {
  std::vector<double> fwd = around(1.0);
  fwd[3] = fwd[7] = fwd[11] = 9.0;  // 15% of samples over twice the fastest; the median stands
  ResultRow r = timed_row(fwd, around(2.0), around(3.0));
  r.activity = quiet_host();
  TrustAssessment t = assess_trust(r);
  EXPECT_EQ(t.level, Trust::noisy);
  EXPECT_EQ(t.evidence.at(0), "forward: 15% of samples slower than twice the fastest (heavy tail or two modes)");
  r.activity->cpu_pressure_share = 0.06;
  t = assess_trust(r);
  EXPECT_EQ(t.level, Trust::disturbed);
  EXPECT_EQ(t.evidence.back(), "the uneven samples coincide with a busy machine");
}

TEST(Trust, AStepFarFromForwardPlusBackwardIsDisturbed) {
  // "step 116 ms with fwd 0.36 ms and bwd 0.47 ms"
  ResultRow r = timed_row(around(0.36), around(0.47), around(116.0));
  TrustAssessment t = assess_trust(r);
  EXPECT_EQ(t.level, Trust::disturbed);
  EXPECT_NE(t.evidence.at(0).find("against forward + backward"), std::string::npos);
  r = timed_row(around(1.0), around(2.0), around(3.2));  // a step near fwd + bwd is fine
  EXPECT_EQ(assess_trust(r).level, Trust::ok);
}

TEST(Trust, AFallingClockDisturbs) {
  ResultRow r = timed_row(around(1.0), around(2.0), around(3.0));
  r.clock = ClockWindow{"sm", 1980, 1755, {"sw_thermal_slowdown"}};
  EXPECT_EQ(assess_trust(r).level, Trust::disturbed);
}

TEST(Trust, RowsThatDidNotRunOrWereNotTimedAreNotJudged) {
  ResultRow r = timed_row(around(0.36), around(0.47), around(116.0));
  r.status = RunStatus::oom;
  EXPECT_EQ(assess_trust(r).level, Trust::ok);
  ResultRow analyzed;
  EXPECT_EQ(assess_trust(analyzed).level, Trust::ok);
}

TEST(Trust, EvidenceRoundTripsThroughJsonAndTrustIsRecomputed) {
  ResultSet set;
  set.engine = "convbench test";
  set.device = "cpu";
  ResultRow r = timed_row(around(1.0), around(2.0), around(3.0));
  r.activity = quiet_host();
  r.activity->cpu_pressure_share = 0.5;
  r.activity->load_before = 1.5;
  r.activity->gpu_other_processes = 0;
  set.rows.push_back(r);
  const std::string text = results_to_json(set).dump();
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["results"][0]["trust"], "disturbed");
  EXPECT_EQ(j["results"][0]["host_activity"]["cpu_pressure_share"], 0.5);
  EXPECT_FALSE(j["results"][0]["host_activity"].contains("load_after"));  // not read: left out, not 0
  const ResultSet back = results_from_json(nlohmann::json::parse(text), "mem.json");
  ASSERT_TRUE(back.rows.at(0).activity);
  EXPECT_EQ(back.rows[0].activity->cpus, 2);
  EXPECT_EQ(back.rows[0].activity->load_before, 1.5);
  EXPECT_FALSE(back.rows[0].activity->load_after);
  EXPECT_EQ(assess_trust(back.rows[0]).level, Trust::disturbed);
  // The warning every output prints names the evidence.
  const std::vector<std::string> w = row_warnings(back.rows[0]);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("b / v: disturbed: a runnable task waited for a CPU 50% of the time"), std::string::npos) << w[0];
}

TEST(HostActivity, ParsesTheKernelsTexts) {
  std::istringstream pressure(
      "some avg10=0.01 avg60=0.16 avg300=1.93 total=413364039\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  EXPECT_EQ(parse_cpu_pressure_some_total(pressure), 413364039.0);
  std::istringstream no_some("full avg10=0.00 total=5\n");
  EXPECT_FALSE(parse_cpu_pressure_some_total(no_some));
  std::istringstream stat("cpu  612406 0 53990 465731 1269 0 176 387 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
  double steal = 0, all = 0;
  ASSERT_TRUE(parse_proc_stat_steal(stat, steal, all));
  EXPECT_EQ(steal, 387.0);
  EXPECT_EQ(all, 612406.0 + 53990 + 465731 + 1269 + 176 + 387);
  std::istringstream short_stat("cpu  1 2 3\n");
  EXPECT_FALSE(parse_proc_stat_steal(short_stat, steal, all));
  std::istringstream loadavg("0.28 0.65 1.26 1/82 11480\n");
  EXPECT_EQ(parse_loadavg_1min(loadavg), 0.28);
}

TEST(HostActivity, SharesComeFromTheDifferenceOfTwoSnapshots) {
  HostActivitySnapshot a, b;
  a.wall_s = 100;
  b.wall_s = 110;
  a.process_cpu_s = 5;
  b.process_cpu_s = 25;
  a.involuntary_switches = 10;
  b.involuntary_switches = 510;
  a.cpu_pressure_some_us = 1e6;
  b.cpu_pressure_some_us = 1e6 + 4.3e6;  // 4.3 s of 10
  a.steal_ticks = 100;
  b.steal_ticks = 150;
  a.all_ticks = 1000;
  b.all_ticks = 3000;
  a.load1 = 0.5;
  b.load1 = 2.5;
  const HostActivity h = host_activity_between(a, b, 2, 2);
  EXPECT_DOUBLE_EQ(h.wall_s, 10);
  EXPECT_DOUBLE_EQ(h.cpu_per_wall, 2.0);
  EXPECT_DOUBLE_EQ(h.involuntary_switches_per_s, 50.0);
  EXPECT_NEAR(*h.cpu_pressure_share, 0.43, 1e-12);
  EXPECT_DOUBLE_EQ(*h.steal_share, 0.025);
  EXPECT_EQ(h.load_before, 0.5);
  EXPECT_EQ(h.load_after, 2.5);
  HostActivitySnapshot no_psi = b;
  no_psi.cpu_pressure_some_us.reset();
  EXPECT_FALSE(host_activity_between(a, no_psi, 2, 2).cpu_pressure_share);
}

TEST(HostActivity, AffinityListIsCompact) {
  const std::string list = cpu_affinity_list();
  EXPECT_FALSE(list.empty());
  EXPECT_GE(cpu_affinity_count(), 1);
  EXPECT_GE(compute_threads(), 1);
}

}  // namespace
}  // namespace convbench

// `compare --graph` and the clock-drop warning, on host machines: the runner's graph-replay
// plumbing through a backend that records by running the work once (what stream capture does to
// the executor's host state) and counts replays, clocks fed from a script, the warnings every
// output carries, the results file round trip, and diff's use of both. The CUDA graph itself is
// checked against eager steps in cuda_backend_test.cpp (GPU only).
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "backends/reference/reference_backend.hpp"
#include "measure/variant_runner.hpp"
#include "report/gbench_json.hpp"
#include "report/latex_table.hpp"
#include "report/regression_diff.hpp"
#include "report/results_csv.hpp"
#include "report/run_warnings.hpp"
#include "report/summary_tables.hpp"
#include "results/json_results.hpp"
#include "runtime/device_clock.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

// The reference backend with replay: capture() runs the work once (as stream capture runs the
// host side of it) and replay() stands for the device work, taking a fixed 100 us.
class RecordingBackend final : public ReferenceBackend {
 public:
  DeviceMeasurement& measurement() override { return measurement_; }
  void forward(const ForwardCall& call) override {
    if (&call.op == &call.graph.ops.front()) ++steps;
    ReferenceBackend::forward(call);
  }

  int captures = 0;
  int replays = 0;
  int steps = 0;  // forward passes begun (the graph's first op run)
  mutable std::vector<int> steps_at_clock_read;
  std::string capture_error;
  bool capture_out_of_memory = false;
  mutable std::deque<ClockReading> clocks;

 private:
  class Replay final : public ReplayableWork {
   public:
    explicit Replay(int& count) : count_(count) {}
    void replay() override {
      ++count_;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }

   private:
    int& count_;
  };

  class Measurement final : public HostMeasurement {
   public:
    explicit Measurement(RecordingBackend& b) : HostMeasurement("reference"), b_(b) {}
    std::optional<std::string> replay_unsupported() const override { return std::nullopt; }
    std::unique_ptr<ReplayableWork> capture(const std::function<void()>& work) override {
      ++b_.captures;
      if (!b_.capture_error.empty()) {
        work();  // the host side ran into the failing call mid-way: leave state as a real failure would
        if (b_.capture_out_of_memory) throw OutOfMemory(1024, b_.capture_error);
        throw std::runtime_error(b_.capture_error);
      }
      work();
      return std::make_unique<Replay>(b_.replays);
    }
    std::optional<ClockReading> clock() const override {
      b_.steps_at_clock_read.push_back(b_.steps);
      if (b_.clocks.empty()) return std::nullopt;
      ClockReading c = b_.clocks.front();
      b_.clocks.pop_front();
      return c;
    }

   private:
    RecordingBackend& b_;
  };

  Measurement measurement_{*this};
};

RunOptions quick(bool graph) {
  RunOptions o;
  o.measure.min_time_s = 0;
  o.measure.min_samples = 3;
  o.measure.timeout_s = 0.3;
  o.graph = graph;
  return o;
}

Graph small_graph(bool training) {
  BlockSpec b = testing::small_block(2, 4, 8, 6);
  b.batch = 2;
  b.mode = training ? RunMode::train : RunMode::infer;
  return build_variant_graph(b, testing::variant("standard"));
}

TEST(GraphReplay, OneCaptureThenTimedReplaysAndTheGradientSlotsAreFreeAgain) {
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "train" : "infer");
    const Graph g = small_graph(training);
    RecordingBackend backend;
    RunOptions options = quick(true);
    options.per_op_steps = 1;  // eager steps after the capture: they fail if gradients were left set
    ResultRow row;
    run_variant(g, training, backend, options, row);
    ASSERT_EQ(row.status, RunStatus::ok) << row.message;
    EXPECT_EQ(backend.captures, 1);
    ASSERT_TRUE(row.graph.has_value());
    EXPECT_TRUE(row.graph_message.empty());
    EXPECT_GE(row.graph->samples(), 3);
    EXPECT_GT(backend.replays, row.graph->samples());  // plus at least one warm-up replay
    EXPECT_GE(row.graph->min, 0.1);                    // each sample timed one replay
    EXPECT_FALSE(row.op_times.empty());
    EXPECT_EQ(row.step.has_value(), training);
  }
}

TEST(GraphReplay, WithoutTheFlagNothingIsCaptured) {
  const Graph g = small_graph(true);
  RecordingBackend backend;
  ResultRow row;
  run_variant(g, true, backend, quick(false), row);
  ASSERT_EQ(row.status, RunStatus::ok) << row.message;
  EXPECT_EQ(backend.captures, 0);
  EXPECT_FALSE(row.graph.has_value());
}

TEST(GraphReplay, AFailedCaptureKeepsTheEagerTimesAndSaysWhy) {
  const Graph g = small_graph(true);
  RecordingBackend backend;
  backend.capture_error = "conv: operation not permitted when stream is capturing";
  RunOptions options = quick(true);
  options.per_op_steps = 1;
  ResultRow row;
  row.block = "small";
  row.variant = "standard";
  run_variant(g, true, backend, options, row);
  ASSERT_EQ(row.status, RunStatus::ok) << row.message;
  EXPECT_TRUE(row.step.has_value());
  EXPECT_FALSE(row.graph.has_value());
  EXPECT_EQ(row.graph_message, "capture failed: conv: operation not permitted when stream is capturing");
  EXPECT_FALSE(row.op_times.empty());
  ResultSet set;
  set.rows = {row};
  // The row's own timing may also be flagged when the machine is busy (a trust line): look for
  // the replay's warning, first as it is the first problem found.
  const std::vector<std::string> w = run_warnings(set);
  ASSERT_GE(w.size(), 1u);
  EXPECT_EQ(
      w[0],
      "small / standard: no graph replay: capture failed: conv: operation not permitted when stream is capturing");

  // Out of memory while recording: the eager times still stand; the row is not an oom row.
  backend.capture_out_of_memory = true;
  backend.capture_error = "graph pool";
  run_variant(g, true, backend, options, row);
  ASSERT_EQ(row.status, RunStatus::ok) << row.message;
  EXPECT_TRUE(row.step.has_value());
  EXPECT_FALSE(row.graph.has_value());
  EXPECT_NE(row.graph_message.find("capture failed: "), std::string::npos);
  EXPECT_NE(row.graph_message.find("graph pool"), std::string::npos) << row.graph_message;
}

TEST(GraphReplay, HostBackendsSayWhyTheyCannotReplay) {
  ReferenceBackend reference;
  const auto why = reference.measurement().replay_unsupported();
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("--device cuda"), std::string::npos) << *why;
  EXPECT_THROW(reference.measurement().capture([] {}), std::logic_error);
}

TEST(ClockWatch, ReadJustBeforeTheFirstSampleAndAfterTheLast) {
  const Graph g = small_graph(true);
  RecordingBackend backend;
  backend.clocks = {{"sm", 1980, {}}, {"sm", 1755, {"sw_power_cap", "sw_thermal_slowdown"}}};
  ResultRow row;
  row.block = "small";
  row.variant = "standard";
  run_variant(g, true, backend, quick(true), row);
  ASSERT_EQ(row.status, RunStatus::ok) << row.message;
  ASSERT_TRUE(row.clock.has_value());
  EXPECT_EQ(row.clock->domain, "sm");
  EXPECT_EQ(row.clock->before_mhz, 1980);
  EXPECT_EQ(row.clock->after_mhz, 1755);
  EXPECT_TRUE(backend.clocks.empty());  // read exactly twice
  // The first read comes after the memory pass (1 step) and the forward phase's warm-up (at
  // least 1 step): not while the device is still leaving its idle clock.
  ASSERT_EQ(backend.steps_at_clock_read.size(), 2u);
  EXPECT_GE(backend.steps_at_clock_read[0], 2);
  EXPECT_EQ(backend.steps_at_clock_read[1], backend.steps) << "the second read follows the last timed step";
  EXPECT_TRUE(clock_dropped(*row.clock));
  ResultSet set;
  set.rows = {row};
  const std::vector<std::string> w = run_warnings(set);
  ASSERT_EQ(w.size(), 2u);  // the drop itself, and the row's trust verdict that follows from it
  EXPECT_EQ(w[1].rfind("small / standard: disturbed: ", 0), 0u) << w[1];
  EXPECT_NE(w[1].find("sm clock fell from 1980 to 1755 MHz while timing"), std::string::npos) << w[1];
  EXPECT_EQ(w[0].rfind("small / standard: sm clock 1980 -> 1755 MHz (-11.4%), limited by sw_power_cap, "
                       "sw_thermal_slowdown while timing",
                       0),
            0u)
      << w[0];
  EXPECT_NE(format_tables(set, TableStyle::terminal).find("warning: small / standard: sm clock"), std::string::npos);
}

TEST(ClockWatch, MemoryOnlyRunsAndUnreadableClocksLeaveNoWindow) {
  const Graph g = small_graph(true);
  RecordingBackend backend;
  backend.clocks = {{"sm", 1980, {}}, {"sm", 1980, {}}};
  RunOptions memory_only = quick(false);
  memory_only.time = false;
  ResultRow row;
  run_variant(g, true, backend, memory_only, row);
  EXPECT_FALSE(row.clock.has_value());
  EXPECT_EQ(backend.clocks.size(), 2u);
  backend.clocks = {{"sm", 1980, {}}};  // the second read fails
  run_variant(g, true, backend, quick(false), row);
  EXPECT_FALSE(row.clock.has_value());
}

TEST(ClockWatch, HostBackendsReportTheCpuClock) {
  const auto host = read_host_cpu_clock();
  if (!host) GTEST_SKIP() << "neither cpufreq nor /proc/cpuinfo gives a clock on this machine";
  EXPECT_EQ(host->domain, "cpu");
  EXPECT_GT(host->mhz, 0.0);
  ReferenceBackend reference;
  const Graph g = small_graph(false);
  ResultRow row;
  run_variant(g, false, reference, quick(false), row);
  ASSERT_TRUE(row.clock.has_value());
  EXPECT_EQ(row.clock->domain, "cpu");
}

TEST(ClockWatch, CpuinfoFastestCoreIgnoresOtherAndMalformedLines) {
  std::istringstream two(
      "processor\t: 0\ncpu MHz\t\t: 2000.000\nmodel name\t: X\ncpu MHz\t\t: 3000.5\ncpu MHz : fast\n");
  const auto fastest = fastest_cpuinfo_mhz(two);
  ASSERT_TRUE(fastest.has_value());
  EXPECT_DOUBLE_EQ(*fastest, 3000.5);
  std::istringstream none("processor\t: 0\nBogoMIPS\t: 50.00\n");
  EXPECT_FALSE(fastest_cpuinfo_mhz(none).has_value());
}

TEST(ClockWatch, ADropIsMoreThanFivePercent) {
  EXPECT_FALSE(clock_dropped({"sm", 2000, 1900, {}}));  // exactly 5%
  EXPECT_TRUE(clock_dropped({"sm", 2000, 1899, {}}));
  EXPECT_FALSE(clock_dropped({"sm", 1000, 1980, {}}));  // rising is not a drop
  EXPECT_FALSE(clock_dropped({"sm", 0, 0, {}}));
  EXPECT_EQ(clock_change_text({"cpu", 2000, 2100, {}}), "cpu clock 2000 -> 2100 MHz (+5.0%)");
}

ResultRow timed_row(const std::string& variant, double step_ms, std::optional<ClockWindow> clock) {
  ResultRow r;
  r.block = "blk";
  r.variant = variant;
  r.mode = "train";
  r.dtype = "float32";
  r.layout = "channels_first";
  r.input_shape = {2, 4, 6, 6};
  r.device = "cuda";
  TimeStats t;
  t.median = t.mean = t.min = t.max = t.q1 = t.q3 = step_ms;
  t.raw_ms = {step_ms, step_ms, step_ms};
  r.forward = r.backward = r.step = t;
  TimeStats g = t;
  g.median = g.mean = g.min = g.max = g.q1 = g.q3 = step_ms * 0.8;
  g.raw_ms = {g.median, g.median, g.median};
  r.graph = g;
  r.clock = clock;
  return r;
}

TEST(ClockWatch, ProvenanceSummarisesTheRun) {
  EXPECT_TRUE(clock_provenance({}).is_null());
  const std::vector<ResultRow> rows = {timed_row("a", 1, ClockWindow{"sm", 1980, 1965, {}}),
                                       timed_row("b", 1, std::nullopt),
                                       timed_row("c", 1, ClockWindow{"sm", 1950, 1700, {}})};
  const nlohmann::json p = clock_provenance(rows);
  EXPECT_EQ(p["domain"], "sm");
  EXPECT_EQ(p["before_mhz"], 1980.0);
  EXPECT_EQ(p["after_mhz"], 1700.0);
  EXPECT_EQ(p["lowest_mhz"], 1700.0);
  EXPECT_EQ(p["rows_with_drop"], 1);
}

TEST(GraphReplayOutputs, EveryFormatCarriesTheGraphTimeAndJsonRoundTripsIt) {
  ResultSet set;
  set.engine = "convbench test";
  set.device = "cuda";
  ResultRow failed = timed_row("b", 2, ClockWindow{"sm", 1980, 1980, {}});
  failed.graph.reset();
  failed.graph_message = "capture failed: x";
  set.rows = {timed_row("a", 1, ClockWindow{"sm", 1980, 1700, {"hw_slowdown"}}), failed};
  set.rows[0].is_baseline = true;

  const ResultSet back = results_from_json(results_to_json(set), "mem.json");
  ASSERT_EQ(back.rows.size(), 2u);
  ASSERT_TRUE(back.rows[0].graph.has_value());
  EXPECT_DOUBLE_EQ(back.rows[0].graph->median, 0.8);
  ASSERT_TRUE(back.rows[0].clock.has_value());
  EXPECT_EQ(back.rows[0].clock->after_mhz, 1700);
  EXPECT_EQ(back.rows[0].clock->limits_after, std::vector<std::string>{"hw_slowdown"});
  EXPECT_FALSE(back.rows[1].graph.has_value());
  EXPECT_EQ(back.rows[1].graph_message, "capture failed: x");

  const std::string table = format_tables(back, TableStyle::terminal);
  EXPECT_NE(table.find("graph ms"), std::string::npos) << table;
  EXPECT_NE(table.find("0.800"), std::string::npos) << table;
  EXPECT_NE(table.find("warning: blk / a: sm clock 1980 -> 1700 MHz (-14.1%), limited by hw_slowdown"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("warning: blk / b: no graph replay: capture failed: x"), std::string::npos) << table;
  const std::string csv = format_csv(back);
  EXPECT_NE(csv.find(",graph_median_ms,graph_q1_ms,graph_q3_ms,clock_domain,clock_before_mhz,clock_after_mhz,trust,"),
            std::string::npos);
  EXPECT_NE(csv.find(",0.800000,0.800000,0.800000,sm,1980.0,1700.0,disturbed,sm clock fell from 1980 to 1700 MHz"),
            std::string::npos)
      << csv;
  const std::string latex = format_latex(back);
  EXPECT_NE(latex.find("& Graph &"), std::string::npos) << latex;
  EXPECT_NE(latex.find("% warning: blk / a: sm clock 1980 -> 1700 MHz"), std::string::npos) << latex;
  const std::string gbench = results_to_gbench_json(back).dump();
  EXPECT_NE(gbench.find("\"blk/a/step_graph\""), std::string::npos);
  EXPECT_EQ(gbench.find("\"blk/b/step_graph\""), std::string::npos);
}

TEST(GraphReplayOutputs, DiffJudgesTheGraphTimeAndFlagsClockDrops) {
  ResultSet base, next;
  base.rows = {timed_row("a", 1.0, ClockWindow{"sm", 1980, 1980, {}})};
  next.rows = {timed_row("a", 1.2, ClockWindow{"sm", 1980, 1600, {"sw_thermal_slowdown"}})};
  // A row whose clock fell is disturbed: its times are reported, not judged ...
  const DiffReport unjudged = diff_results(base, next, DiffOptions{});
  for (const MetricDiff& m : unjudged.rows.at(0).metrics)
    if (m.metric.find("time") != std::string::npos) {
      EXPECT_EQ(m.verdict, Verdict::not_compared) << m.metric;
      EXPECT_EQ(m.note, "disturbed in new: not judged");
    }
  EXPECT_EQ(unjudged.rows.at(0).disturbed.rfind("new: sm clock fell from 1980 to 1600 MHz", 0), 0u);
  EXPECT_EQ(unjudged.exit_code(), 4);  // not judged: a gate does not pass on it
  // ... unless asked, and then the verdict carries the clock's note.
  DiffOptions judge;
  judge.judge_disturbed = true;
  const DiffReport d = diff_results(base, next, judge);
  ASSERT_EQ(d.rows.size(), 1u);
  bool graph_seen = false;
  for (const MetricDiff& m : d.rows[0].metrics) {
    if (m.metric.find("time") == std::string::npos) continue;
    EXPECT_EQ(m.verdict, Verdict::slower) << m.metric;
    EXPECT_NE(m.note.find("clock fell while timing (new: sm clock 1980 -> 1600 MHz"), std::string::npos) << m.note;
    graph_seen = graph_seen || m.metric == "step time (graph)";
  }
  EXPECT_TRUE(graph_seen);
  EXPECT_EQ(d.exit_code(), 1);
}

}  // namespace
}  // namespace convbench

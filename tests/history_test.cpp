// The results history (lib/history): the statistics against independent references, the store
// (schema, migrations, bad databases left unchanged), and the change rule on a history built with
// known injected changes: a 10% step at run 20 in one series among 200 series of pure noise, and
// a device change halfway.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "history/false_discovery.hpp"
#include "history/history_check.hpp"
#include "history/history_db.hpp"
#include "history/history_schema.hpp"
#include "history/history_store.hpp"
#include "history/history_tables.hpp"
#include "history/postgres_db.hpp"
#include "history/rank_test.hpp"
#include "history/sqlite_db.hpp"
#include "history/step_fit.hpp"
#include "history/trend_report.hpp"
#include "results/sample_stats.hpp"
#include "util/sha256.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

// ---- Mann-Whitney U against SciPy 1.10.1 (Debian 12's python3-scipy) ----------------------

TEST(HistoryRankTest, MatchesScipyWithoutTies) {
  // scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic", use_continuity=True)
  // -> statistic 73.0, pvalue 0.0036815510303038813 (x and y share 1.10 and 1.12: ties too)
  const std::vector<double> x = {1.10, 1.12, 1.09, 1.15, 1.11, 1.13, 1.12, 1.10};
  const std::vector<double> y = {1.00, 1.02, 1.01, 1.03, 1.00, 0.99, 1.02, 1.01, 1.12, 1.10};
  const RankTest t = mann_whitney_u(x, y);
  EXPECT_DOUBLE_EQ(t.u, 73.0);
  EXPECT_NEAR(t.p_value, 0.0036815510303038813, 1e-12);
  EXPECT_GT(t.z, 0);  // x tends to be larger
  EXPECT_NEAR(t.superiority, 73.0 / 80.0, 1e-12);
}

TEST(HistoryRankTest, MatchesScipyWithHeavyTies) {
  // scipy.stats.mannwhitneyu([1,2,2,3,3,3,4,5], [2,3,3,4,4,4,5,5,6], alternative="two-sided",
  // method="asymptotic", use_continuity=True) -> statistic 18.5, pvalue 0.09387558514842127
  const RankTest t = mann_whitney_u({1, 2, 2, 3, 3, 3, 4, 5}, {2, 3, 3, 4, 4, 4, 5, 5, 6});
  EXPECT_DOUBLE_EQ(t.u, 18.5);
  EXPECT_NEAR(t.p_value, 0.09387558514842127, 1e-12);
  EXPECT_LT(t.z, 0);
}

TEST(HistoryRankTest, MatchesScipyWhenInterleaved) {
  // scipy.stats.mannwhitneyu([0.5,0.7,0.9,1.1,1.3], [0.6,0.8,1.0,1.2], ...) -> statistic 10.0, pvalue 1.0
  const RankTest t = mann_whitney_u({0.5, 0.7, 0.9, 1.1, 1.3}, {0.6, 0.8, 1.0, 1.2});
  EXPECT_DOUBLE_EQ(t.u, 10.0);
  EXPECT_DOUBLE_EQ(t.p_value, 1.0);
}

TEST(HistoryRankTest, EqualOrEmptySamplesGiveNoEvidence) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({1, 1, 1}, {1, 1}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2}).p_value, 1.0);
}

// ---- Benjamini-Hochberg -------------------------------------------------------------------

TEST(HistoryFalseDiscovery, MatchesTheBenjaminiHochbergAdjustment) {
  // SciPy 1.10 has no false_discovery_control (1.11 added it); these are R's
  // p.adjust(c(.01,.04,.03,.005,.2,.5,.049,.9), "BH"), which scipy>=1.11's
  // false_discovery_control(p, method="bh") also gives: sorted p * 8 / rank, made monotone from
  // the top (0.04 0.04 0.08->0.0784 0.08->0.0784 0.0784 0.2667 0.5714 0.9).
  const std::vector<double> q = benjamini_hochberg({0.01, 0.04, 0.03, 0.005, 0.2, 0.5, 0.049, 0.9});
  const std::vector<double> expected = {0.04, 0.0784, 0.0784, 0.04, 0.2 * 8 / 6, 0.5 * 8 / 7, 0.0784, 0.9};
  ASSERT_EQ(q.size(), expected.size());
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(q[i], expected[i], 1e-12) << i;
  EXPECT_TRUE(benjamini_hochberg({}).empty());
  EXPECT_DOUBLE_EQ(benjamini_hochberg({0.7})[0], 0.7);
}

// ---- the step fit -------------------------------------------------------------------------

// Every segmentation of a short series tried (2^(n-1) of them): the exact optimum the pruned
// search must find.
double brute_force_cost(const std::vector<double>& v, double var, double beta, int min_seg, std::vector<int>& starts) {
  const int n = static_cast<int>(v.size());
  double best = std::numeric_limits<double>::infinity();
  for (uint32_t mask = 0; mask < (1u << (n - 1)); ++mask) {
    std::vector<int> cut = {0};
    for (int i = 1; i < n; ++i)
      if (mask & (1u << (i - 1))) cut.push_back(i);
    cut.push_back(n);
    double cost = -beta;
    bool ok = true;
    for (size_t k = 0; k + 1 < cut.size(); ++k) {
      if (cut[k + 1] - cut[k] < min_seg) ok = false;
      double mean = 0;
      for (int i = cut[k]; i < cut[k + 1]; ++i) mean += v[i];
      mean /= cut[k + 1] - cut[k];
      for (int i = cut[k]; i < cut[k + 1]; ++i) cost += (v[i] - mean) * (v[i] - mean) / var;
      cost += beta;
    }
    if (ok && cost < best - 1e-12) {
      best = cost;
      starts.assign(cut.begin(), cut.end() - 1);
    }
  }
  return best;
}

TEST(HistoryStepFit, FindsTheExactOptimumOfAnExhaustiveSearch) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.01);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> v;
    for (int i = 0; i < 14; ++i) v.push_back((i >= 5 ? 1.08 : 1.0) + (i >= 10 ? -0.05 : 0) + noise(rng));
    const StepFitOptions o;
    const StepFit fit = fit_steps(v, o);
    std::vector<int> starts;
    brute_force_cost(v, fit.noise_sd * fit.noise_sd, o.penalty_per_log_n * std::log(14.0), o.min_segment, starts);
    std::vector<int> got;
    for (const Segment& s : fit.segments) got.push_back(s.begin);
    EXPECT_EQ(got, starts) << "trial " << trial;
  }
}

TEST(HistoryStepFit, FindsAStepAndLeavesNoiseWhole) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<double> step, flat;
  for (int i = 0; i < 40; ++i) {
    step.push_back((i >= 20 ? 1.1 : 1.0) + noise(rng));
    flat.push_back(1.0 + noise(rng));
  }
  const StepFit fit = fit_steps(step);
  ASSERT_EQ(fit.segments.size(), 2u);
  EXPECT_EQ(fit.segments[1].begin, 20);
  EXPECT_NEAR(fit.segments[1].level / fit.segments[0].level, 1.1, 0.01);
  EXPECT_EQ(fit_steps(flat).segments.size(), 1u);
  EXPECT_EQ(fit_steps({1.0, 1.0, 1.0, 1.0, 1.0}).segments.size(), 1u);  // no noise at all: nothing to scale by
}

// ---- a history with known changes ---------------------------------------------------------

struct TempDb {
  fs::path dir = fs::temp_directory_path() / ("convbench-history-test-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(std::random_device{}()));
  TempDb() { fs::create_directories(dir); }
  ~TempDb() { fs::remove_all(dir); }
  std::string path(const std::string& name = "h.sqlite") const { return (dir / name).string(); }
};

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One run: `series` rows (variants v0..), infer mode, on the GPU `gpu`; row i's samples drawn
// around level(i).
HistoryRun synthetic_run(int index, int series, const std::string& gpu, const std::function<double(int)>& level,
                         std::mt19937& rng, int samples = 15) {
  std::normal_distribution<double> noise(0, 0.02);
  ResultSet set;
  set.engine = "convbench 0.1.0";
  set.device = "cuda";
  set.provenance = {{"backend", "cuda"},
                    {"git_commit", "c" + std::to_string(1000 + index)},
                    {"date", "2026-01-01T00:00:" + std::to_string(10 + index % 50) + "Z"},
                    {"host_name", "ci-1"},
                    {"device",
                     {{"gpu", gpu},
                      {"driver_cuda_version", "13.0"},
                      {"runtime_cuda_version", "13.0"},
                      {"cudnn_runtime_version", "9.19.0"},
                      {"sm_clock_max_mhz", 1980}}}};
  for (int s = 0; s < series; ++s) {
    ResultRow r;
    r.block = "blk";
    r.variant = "v" + std::to_string(s);
    r.kind = "standard";
    r.dtype = "float32";
    r.layout = "channels_first";
    r.mode = "infer";
    r.device = "cuda";
    r.graph_hash = sha256_hex("graph of v" + std::to_string(s));
    r.predicted.peak_bytes = 1 << 20;
    std::vector<double> raw;
    for (int i = 0; i < samples; ++i) raw.push_back(level(s) * (1.0 + noise(rng)));
    r.forward = summarize(raw, "noise");
    set.rows.push_back(std::move(r));
  }
  return history_run_from_results(set, "run" + std::to_string(index) + ".json");
}

// A block edited between runs is a new series (another workload's time), but its memory is judged
// against the series of its previous graph, and the check says what changed in the graph.
TEST(HistoryChangeRule, AnEditedBlockIsJudgedOnMemoryAgainstItsPreviousGraphAndSaysWhatChanged) {
  TempDb tmp;
  std::mt19937 rng(7);
  auto flat = [](int) { return 1.0; };
  for (int run = 0; run < 3; ++run) {
    HistoryRun r = synthetic_run(run, 2, "G", flat, rng);
    for (ResultRow& row : r.results.rows) {
      row.params = 9248;
      row.structure = "conv3x3 -> bn -> relu";
    }
    add_runs(tmp.path(), {history_run_from_results(r.results, r.source)});
  }
  auto edited_run = [&](double memory_factor, const std::string& dtype) {
    HistoryRun r = synthetic_run(3, 2, "G", flat, rng);
    ResultRow& row = r.results.rows[0];
    row.graph_hash = sha256_hex("the edited graph of v0");
    row.params = 18496;
    row.structure = "conv1x1 -> conv3x3 -> bn -> relu";
    row.dtype = dtype;
    row.predicted.peak_bytes = static_cast<int64_t>((1 << 20) * memory_factor);
    return history_run_from_results(r.results, "edited.json");
  };
  HistoryReader history(tmp.path());
  const CheckReport more = check_run(history, edited_run(1.38, "float32"), CheckOptions{});
  const SeriesCheck& c = more.series[0];
  EXPECT_TRUE(c.new_series);
  EXPECT_EQ(c.previous_graph_series, 1) << c.note;
  EXPECT_EQ(c.memory, Verdict::more);
  EXPECT_EQ(c.time, Verdict::not_compared);
  EXPECT_NE(c.graph_change.find("structure: conv3x3 -> bn -> relu -> conv1x1 -> conv3x3 -> bn -> relu"),
            std::string::npos)
      << c.graph_change;
  EXPECT_NE(c.graph_change.find("params 9,248 -> 18,496 (+100.0%)"), std::string::npos) << c.graph_change;
  EXPECT_NE(c.graph_change.find("predicted peak 1.00 MiB -> 1.38 MiB (+38.0%)"), std::string::npos) << c.graph_change;
  EXPECT_EQ(more.exit_code(), 1);
  EXPECT_NE(format_check(more).find("graph changed since series #1 (run #3)"), std::string::npos) << format_check(more);

  // The same memory: nothing regressed, but the time could not be judged.
  CheckOptions o;
  const CheckReport same = check_run(history, edited_run(1.0, "float32"), o);
  EXPECT_EQ(same.series[0].memory, Verdict::same);
  EXPECT_EQ(same.exit_code(), 4);
  o.accept_unjudged = true;
  EXPECT_EQ(check_run(history, edited_run(1.0, "float32"), o).exit_code(), 0);

  // Another dtype is another workload, not an edit: nothing to judge the memory against.
  const CheckReport other = check_run(history, edited_run(1.38, "float16"), CheckOptions{});
  EXPECT_EQ(other.series[0].previous_graph_series, 0);
  EXPECT_EQ(other.series[0].memory, Verdict::not_compared);
  EXPECT_EQ(other.exit_code(), 4);
}

TEST(HistoryChangeRule, FindsTheStepAtItsRunWithoutFalseAlarmsAndADeviceChangeStartsNewSeries) {
  TempDb tmp;
  const std::string db = tmp.path();
  std::mt19937 rng(2026);
  constexpr int kSeries = 201;  // v0 steps by 10% at run 20; v1..v200 are pure noise
  constexpr int kRuns = 40;
  auto level_at = [](int run) { return [run](int s) { return s == 0 && run >= 20 ? 1.1 : 1.0; }; };
  CheckOptions o;             // the defaults: last 30, FDR 0.01, threshold 5%
  CheckOptions fdr_only = o;  // the rank test and BH alone: no effect threshold to hide behind
  fdr_only.time_threshold = 0;
  fdr_only.spread_factor = 0;
  fdr_only.step.penalty_per_log_n = 1e6;  // no step verdicts either
  int noise_alarms = 0, noise_alarms_fdr_only = 0, noise_raw_p_below = 0, noise_tests = 0;
  for (int run = 0; run < kRuns; ++run) {
    const HistoryRun r = synthetic_run(run, kSeries, "NVIDIA H100 80GB HBM3", level_at(run), rng);
    if (run >= 5) {
      HistoryReader history(db);
      const CheckReport report = check_run(history, r, o);
      const CheckReport bare = check_run(history, r, fdr_only);
      ASSERT_EQ(report.series.size(), static_cast<size_t>(kSeries));
      for (int s = 1; s < kSeries; ++s) {
        noise_alarms += report.series[s].time != Verdict::same;
        noise_alarms_fdr_only += bare.series[s].time == Verdict::slower || bare.series[s].time == Verdict::faster;
        noise_raw_p_below += bare.series[s].p_value <= 0.01;
        ++noise_tests;
      }
      const SeriesCheck& stepped = report.series[0];
      if (run < 20) {
        EXPECT_EQ(stepped.time, Verdict::same) << "run " << run << ": " << stepped.explanation;
      } else if (run == 20) {
        // The first run after the step: found at once, by the rank test, with its evidence.
        EXPECT_EQ(stepped.time, Verdict::slower) << stepped.explanation;
        EXPECT_LT(stepped.q_value, 1e-6) << stepped.explanation;
        EXPECT_NEAR(stepped.change, 0.10, 0.02);
        EXPECT_EQ(report.exit_code(), 1);
        EXPECT_NE(stepped.explanation.find("Mann-Whitney p="), std::string::npos);
      }
      // Run 21 is the second at the new level (the step is confirmed as the new reference only
      // then); from run 22 on, the runs are judged against the level since the step.
      if (run < 20 || run >= 22) {
        EXPECT_NE(report.exit_code(), 1) << "run " << run << ": " << stepped.explanation;
      }
      if (run >= 22) {
        EXPECT_EQ(stepped.time, Verdict::same) << "run " << run << ": " << stepped.explanation;
        EXPECT_EQ(stepped.first_run, 21) << stepped.explanation;  // run 20 has id 21
      }
    }
    add_runs(db, {r});
  }
  // No false alarm among 200 noise series x 35 checks at the chosen level; BH alone keeps them
  // near the FDR where unadjusted p <= 0.01 gives about one per hundred tests.
  EXPECT_EQ(noise_alarms, 0);
  EXPECT_LE(noise_alarms_fdr_only, 3) << noise_tests << " tests";
  EXPECT_GT(noise_raw_p_below, noise_tests / 300) << "the unadjusted level would have raised alarms";

  // The step fit over the whole series puts the step at run 20 (the 21st run, id 21) only.
  HistoryReader history(db);
  std::optional<StoredSeries> v0;
  for (const StoredSeries& s : history.series())
    if (s.key.variant == "v0") v0 = s;
  ASSERT_TRUE(v0);
  const std::vector<StoredMeasurement> ms = history.measurements(v0->id);
  ASSERT_EQ(ms.size(), static_cast<size_t>(kRuns));
  const std::vector<ChangePoint> steps = change_points(ms);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].index, 20u);
  EXPECT_EQ(ms[steps[0].index].git_commit, "c1020");
  int noise_steps = 0;
  for (const StoredSeries& s : history.series())
    if (s.key.variant != "v0") noise_steps += !change_points(history.measurements(s.id)).empty();
  // The fit alone marks a level change in a noise series rarely (0.7% of them in simulation:
  // step_fit.hpp); the check never alarmed on one (above), its effect threshold guards it.
  EXPECT_LE(noise_steps, 4) << "of 200 noise series";
  EXPECT_NE(format_series_trends(history, "/ v0$", 0).find("<- step"), std::string::npos);
  EXPECT_NE(format_trend_report(history, "/ v0$").find("class=\"step\""), std::string::npos);

  // The device changes halfway through the next 40 runs: another GPU, 30% slower. Its runs start
  // new series instead of alarming against the H100's.
  const HistoryRun other = synthetic_run(
      40, kSeries, "NVIDIA A100-SXM4-80GB", [](int) { return 1.3; }, rng);
  const CheckReport report = check_run(history, other, o);
  for (const SeriesCheck& c : report.series) {
    EXPECT_TRUE(c.new_series);
    EXPECT_NE(c.note.find("device NVIDIA H100 80GB HBM3 -> NVIDIA A100-SXM4-80GB"), std::string::npos) << c.note;
  }
  EXPECT_EQ(report.exit_code(), 4);  // new series are not judged: no silent pass ...
  CheckOptions accept = o;
  accept.accept_unjudged = true;  // ... unless the gate accepts them
  EXPECT_EQ(check_run(history, other, accept).exit_code(), 0);
  add_runs(db, {other});
  HistoryReader after(db);
  EXPECT_EQ(after.series().size(), 2u * kSeries);
}

TEST(HistoryChangeRule, AGradualDriftIsReportedOnceWhenItAddsUpBeyondTheThreshold) {
  TempDb tmp;
  std::mt19937 rng(9);
  // Flat for 10 runs, then 0.6% slower per run: no run differs from its neighbours by 5%.
  auto level = [](int run) { return 1.0 + 0.006 * std::max(0, run - 9); };
  std::vector<int> flagged;
  for (int run = 0; run < 30; ++run) {
    const HistoryRun r = synthetic_run(
        run, 1, "G", [&](int) { return level(run); }, rng);
    if (run >= 5) {
      HistoryReader history(tmp.path());
      const CheckReport report = check_run(history, r, {});
      if (report.series[0].time == Verdict::slower) {
        flagged.push_back(run);
        EXPECT_NE(report.series[0].explanation.find("step fit: the level moved +"), std::string::npos)
            << report.series[0].explanation;
      }
      EXPECT_NE(report.series[0].time, Verdict::faster);
    }
    add_runs(tmp.path(), {r});
  }
  ASSERT_FALSE(flagged.empty()) << "the drift was never reported";
  EXPECT_LE(flagged.size(), 2u);
  EXPECT_GE(level(flagged[0]) - 1.0, 0.05);  // reported once it adds up to the threshold, not before
}

TEST(HistoryChangeRule, DisturbedRunsNeverDecide) {
  TempDb tmp;
  std::mt19937 rng(5);
  for (int run = 0; run < 8; ++run)
    add_runs(tmp.path(), {synthetic_run(
                             run, 1, "G", [](int) { return 1.0; }, rng)});
  HistoryRun slow = synthetic_run(
      8, 1, "G", [](int) { return 1.5; }, rng);
  HostActivity busy;
  busy.wall_s = 5;
  busy.cpu_pressure_share = 0.6;  // a runnable task waited for a CPU 60% of the time: disturbed
  slow.results.rows[0].activity = busy;
  HistoryReader history(tmp.path());
  const CheckReport report = check_run(history, slow, {});
  EXPECT_EQ(report.series[0].time, Verdict::not_compared);
  EXPECT_NE(report.series[0].note.find("disturbed"), std::string::npos);
  EXPECT_EQ(report.exit_code(), 4);
  CheckOptions judge;
  judge.judge_disturbed = true;
  EXPECT_EQ(check_run(history, slow, judge).series[0].time, Verdict::slower);
}

// ---- the store ----------------------------------------------------------------------------

TEST(HistoryStore, AddsOnceAndMigratesAnOlderSchema) {
  TempDb tmp;
  std::mt19937 rng(1);
  {  // a history at schema version 1, as the first convbench with a history wrote it
    SqliteDb db(tmp.path(), SqliteDb::Mode::read_write_create, 1000);
    db.exec(history_migrations()[0]);
    db.exec("PRAGMA user_version = 1");
    db.exec("PRAGMA application_id = " + std::to_string(kHistoryApplicationId));
  }
  EXPECT_THROW(HistoryReader{tmp.path()}, HistoryDbError);  // readers never migrate
  const HistoryRun run = synthetic_run(
      0, 3, "G", [](int) { return 1.0; }, rng);
  AddSummary s = add_runs(tmp.path(), {run});
  EXPECT_EQ(s.runs_added, 1);
  EXPECT_EQ(s.measurements, 3);
  EXPECT_EQ(s.new_series, 3);
  s = add_runs(tmp.path(), {run});
  EXPECT_EQ(s.runs_added, 0);
  ASSERT_EQ(s.skipped.size(), 1u);
  SqliteDb db(tmp.path(), SqliteDb::Mode::read_only, 1000);
  EXPECT_EQ(db.query_integer("PRAGMA user_version"), kHistorySchemaVersion);
  EXPECT_EQ(db.query_integer("SELECT count(*) FROM trend"), 3);  // the view migration 2 adds
  EXPECT_EQ(db.query_text("PRAGMA journal_mode"), "wal");
}

TEST(HistoryStore, RefusesNewerForeignCorruptAndLockedDatabasesAndLeavesThemUnchanged) {
  TempDb tmp;
  std::mt19937 rng(3);
  const HistoryRun run = synthetic_run(
      0, 2, "G", [](int) { return 1.0; }, rng);
  auto expect_refused = [&](const std::string& path, const std::string& words) {
    const std::string before = bytes_of(path);
    try {
      add_runs(path, {run}, 200);
      ADD_FAILURE() << path << ": added";
    } catch (const HistoryDbError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_EQ(bytes_of(path), before) << path;
  };
  {
    SqliteDb db(tmp.path("newer.sqlite"), SqliteDb::Mode::read_write_create, 1000);
    db.exec("PRAGMA application_id = " + std::to_string(kHistoryApplicationId) + "; PRAGMA user_version = 99");
  }
  expect_refused(tmp.path("newer.sqlite"), "newer convbench");
  {
    SqliteDb db(tmp.path("foreign.sqlite"), SqliteDb::Mode::read_write_create, 1000);
    db.exec("CREATE TABLE t (x); PRAGMA application_id = 42");
  }
  expect_refused(tmp.path("foreign.sqlite"), "not a convbench history");
  std::ofstream(tmp.path("corrupt.sqlite"), std::ios::binary) << std::string(4096, 'x');
  expect_refused(tmp.path("corrupt.sqlite"), "not an intact SQLite database");

  // Locked: another connection holds the write lock past the busy timeout.
  add_runs(tmp.path(), {synthetic_run(
                           1, 2, "G", [](int) { return 1.0; }, rng)});
  SqliteDb holder(tmp.path(), SqliteDb::Mode::read_write_create, 1000);
  Transaction lock(holder);
  try {
    add_runs(tmp.path(), {run}, 200);
    ADD_FAILURE() << "added under a lock";
  } catch (const HistoryDbError& e) {
    EXPECT_NE(std::string(e.what()).find("locked"), std::string::npos) << e.what();
  }
  EXPECT_EQ(holder.query_integer("SELECT count(*) FROM runs"), 1);
}

TEST(HistoryStore, ServerNamesAreTellingAndTheirPasswordsHidden) {
  EXPECT_TRUE(is_history_server("postgresql://ci@db.example/bench"));
  EXPECT_TRUE(is_history_server("postgres://db/bench"));
  EXPECT_FALSE(is_history_server("h.sqlite"));
  EXPECT_FALSE(is_history_server("file:postgresql://x"));
  EXPECT_EQ(history_display_name("postgresql://ci:s3cret@db:5432/bench"), "postgresql://ci:***@db:5432/bench");
  EXPECT_EQ(history_display_name("postgresql://ci@db/bench?password=s3cret&sslmode=require"),
            "postgresql://ci@db/bench?password=***&sslmode=require");
  EXPECT_EQ(history_display_name("postgresql://db/bench?application_name=x&password=p"),
            "postgresql://db/bench?application_name=x&password=***");
  EXPECT_EQ(history_display_name("postgresql://ci@db/bench"), "postgresql://ci@db/bench");
  EXPECT_EQ(history_display_name("a:b@c.sqlite"), "a:b@c.sqlite");  // a file name is shown as given
  // A key spelled with percent escapes is the keyword libpq decodes it to, and logs in with: its
  // value is hidden as the plain spelling's is. So is every keyword libpq keeps secret.
  EXPECT_EQ(history_display_name("postgresql://ci@db/bench?%70assword=s3cret"),
            "postgresql://ci@db/bench?%70assword=***");
  EXPECT_EQ(history_display_name("postgresql://ci@db/bench?sslmode=require&pass%77ord=s3cret"),
            "postgresql://ci@db/bench?sslmode=require&pass%77ord=***");
  EXPECT_EQ(history_display_name("postgresql://ci@db/bench?%73%73%6c%70%61%73%73%77%6f%72%64=k3y"),
            "postgresql://ci@db/bench?%73%73%6c%70%61%73%73%77%6f%72%64=***");
  EXPECT_EQ(history_display_name("postgres://ci:pa%73s@db/bench?%50assword=x"),
            "postgres://ci:***@db/bench?%50assword=x");
  for (const char* uri :
       {"postgresql://ci@db/bench?%70assword=s3cret", "postgresql://ci@db/bench?pass%77ord=s3cret&password=s3cret",
        "postgresql://ci:s3cret@db/bench", "postgresql://ci@db/bench?sslpassword=s3cret"}) {
    const std::string shown = history_display_name(uri);
    EXPECT_EQ(shown.find("s3cret"), std::string::npos) << shown;
    if (const auto clean = postgres_shows_no_secret(shown)) {
      EXPECT_TRUE(*clean) << shown;
    }
  }
  if (const auto clean = postgres_shows_no_secret("postgresql://ci@db/bench?%70assword=s3cret")) {
    EXPECT_FALSE(*clean);
  }
}

TEST(HistoryStore, OneSqlForBothStoresWithPostgresParameters) {
  EXPECT_EQ(postgres_parameters("SELECT id FROM runs WHERE a = ?1 AND b != ?12"),
            "SELECT id FROM runs WHERE a = $1 AND b != $12");
  // A question mark in quoted text is text, and one without a number is not a parameter.
  EXPECT_EQ(postgres_parameters("SELECT '?1', \"c?2\" FROM t WHERE x = ?3 OR y ? 'k'"),
            "SELECT '?1', \"c?2\" FROM t WHERE x = $3 OR y ? 'k'");
  // No question mark in a migration that could be taken for a parameter.
  for (const std::string& m : history_migrations(HistoryDialect::postgresql)) EXPECT_EQ(m.find('?'), std::string::npos);
  EXPECT_EQ(history_migrations(HistoryDialect::sqlite).size(), history_migrations(HistoryDialect::postgresql).size());
}

TEST(HistoryStore, RowsWithoutAGraphHashGetADerivedKeyThatSaysSo) {
  std::mt19937 rng(4);
  HistoryRun run = synthetic_run(
      0, 1, "G", [](int) { return 1.0; }, rng);
  ResultRow& row = run.results.rows[0];
  row.graph_hash.clear();
  row.input_shape = {1, 8, 4, 4};
  const SeriesKey a = series_key(row, run.results);
  EXPECT_EQ(a.graph_hash_source, "derived from shapes and counts");
  row.input_shape = {1, 8, 8, 8};
  EXPECT_NE(series_key(row, run.results).sha256(), a.sha256());  // another shape, another series
}

}  // namespace
}  // namespace convbench

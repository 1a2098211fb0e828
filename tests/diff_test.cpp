// `convbench diff`: verdicts on constructed result pairs (same, 10% slower, 10% faster, noisy
// overlap, memory growth, rows missing on one side, a row that stopped running) and the exit
// codes CI relies on: 0 no regression, 1 regression, 3 ambiguous only, 2 bad input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli_harness.hpp"
#include "report/diff_calibration.hpp"
#include "report/interleaved_verdict.hpp"
#include "report/regression_diff.hpp"
#include "results/json_results.hpp"
#include "util/input_error.hpp"

namespace convbench {
namespace {

using testing::read_file;
using testing::run_cli;
using testing::source_path;
using testing::temp_path;

// Samples spread +-1% around `median` (quartiles at +-0.5%), or +-`spread` when given.
TimeStats stats(double median, double spread = 0.01) {
  TimeStats t;
  t.median = t.mean = median;
  t.q1 = median * (1 - spread / 2);
  t.q3 = median * (1 + spread / 2);
  t.min = median * (1 - spread);
  t.max = median * (1 + spread);
  t.noise = spread / 2;
  t.raw_ms = {t.min, t.q1, t.median, t.q3, t.max};
  return t;
}

ResultRow row(const std::string& variant, double ms, int64_t peak, double spread = 0.01) {
  ResultRow r;
  r.block = "blk";
  r.variant = variant;
  r.kind = "standard";
  r.mode = "train";
  r.dtype = "float32";
  r.layout = "channels_first";
  r.input_shape = {2, 8, 8, 8};
  r.device = "cpu";
  r.predicted.peak_bytes = peak;
  r.measured = r.predicted;
  r.forward = stats(ms / 3, spread);
  r.backward = stats(ms * 2 / 3, spread);
  r.step = stats(ms, spread);
  return r;
}

ResultSet set_of(std::vector<ResultRow> rows) {
  ResultSet s;
  s.engine = "convbench test";
  s.device = "cpu";
  s.rows = std::move(rows);
  return s;
}

Verdict step_verdict(const DiffReport& d, size_t row = 0) {
  for (const MetricDiff& m : d.rows.at(row).metrics)
    if (m.metric == "step time") return m.verdict;
  return Verdict::not_compared;
}

// A block edited between the two runs: still judged (same block, variant and workload), and the
// report says what changed in its graph.
TEST(Diff, ABlockEditedBetweenTheRunsIsJudgedAndSaysWhatChangedInItsGraph) {
  ResultRow base = row("a", 10.0, 1000000), edited = row("a", 10.0, 1380000);
  base.graph_hash = "1111";
  base.params = 9248;
  base.structure = "conv3x3 -> bn -> relu";
  edited.graph_hash = "2222";
  edited.params = 18496;
  edited.structure = "conv1x1 -> conv3x3 -> bn -> relu";
  const DiffReport d = diff_results(set_of({base}), set_of({edited}), DiffOptions{});
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].graph_change.rfind(
                "the graph changed: structure: conv3x3 -> bn -> relu -> conv1x1 -> conv3x3 -> bn -> relu; params "
                "9,248 -> 18,496 (+100.0%); predicted peak ",
                0),
            0u)
      << d.rows[0].graph_change;
  EXPECT_EQ(d.exit_code(), 1);  // 38% more memory
  const std::string text = format_diff(d, TableStyle::terminal);
  EXPECT_NE(text.find("blk / a: the graph changed: structure: "), std::string::npos) << text;
  // The same graph says nothing.
  EXPECT_EQ(diff_results(set_of({base}), set_of({base}), DiffOptions{}).rows[0].graph_change, "");
}

TEST(Diff, TimeVerdictRules) {
  const TimeStats base = stats(10.0);
  EXPECT_EQ(time_verdict(base, stats(10.2), 0.05), Verdict::same);            // +2%
  EXPECT_EQ(time_verdict(base, stats(10.5), 0.05), Verdict::same);            // exactly the threshold
  EXPECT_EQ(time_verdict(base, stats(11.0), 0.05), Verdict::slower);          // +10%, quartiles apart
  EXPECT_EQ(time_verdict(base, stats(9.0), 0.05), Verdict::faster);           // -10%, quartiles apart
  EXPECT_EQ(time_verdict(base, stats(11.0, 0.5), 0.05), Verdict::ambiguous);  // +10% within wide noise
  EXPECT_EQ(time_verdict(stats(10.0, 0.5), stats(9.0), 0.05), Verdict::ambiguous);
  EXPECT_EQ(time_verdict(base, stats(11.0), 0.2), Verdict::same);  // under a looser threshold
  // Separation is judged on the quartiles: new q1 must clear base q3.
  TimeStats touching = stats(11.0);
  touching.q1 = base.q3;
  EXPECT_EQ(time_verdict(base, touching, 0.05), Verdict::ambiguous);
}

TEST(Diff, MemoryVerdictRules) {
  EXPECT_EQ(memory_verdict(1000, 1010, 0.01), Verdict::same);
  EXPECT_EQ(memory_verdict(1000, 1011, 0.01), Verdict::more);
  EXPECT_EQ(memory_verdict(1000, 989, 0.01), Verdict::less);
  EXPECT_EQ(memory_verdict(1000, 1000, 0.0), Verdict::same);
  EXPECT_EQ(memory_verdict(1000, 1001, 0.0), Verdict::more);
}

TEST(Diff, VerdictsAndExitCodesOnConstructedPairs) {
  const DiffOptions o;
  const ResultSet base = set_of({row("a", 10.0, 1 << 20)});
  struct Case {
    const char* name;
    ResultRow next;
    Verdict step;
    int exit_code;
  };
  const Case cases[] = {
      {"same", row("a", 10.1, 1 << 20), Verdict::same, 0},
      {"10% slower", row("a", 11.0, 1 << 20), Verdict::slower, 1},
      {"10% faster", row("a", 9.0, 1 << 20), Verdict::faster, 0},  // a speed-up never fails
      {"noisy overlap", row("a", 11.0, 1 << 20, 0.6), Verdict::ambiguous, 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const DiffReport d = diff_results(base, set_of({c.next}), o);
    ASSERT_EQ(d.rows.size(), 1u);
    EXPECT_EQ(step_verdict(d), c.step);
    EXPECT_EQ(d.exit_code(), c.exit_code);
  }
  // Memory growth is a regression even when time is the same.
  const DiffReport grew = diff_results(base, set_of({row("a", 10.0, (1 << 20) + 20000)}), o);
  EXPECT_EQ(grew.count(Verdict::more), 1);
  EXPECT_EQ(grew.exit_code(), 1);
  EXPECT_EQ(grew.rows[0].metrics.back().metric, "peak memory (measured)");
  // Less memory is good news, not a failure.
  EXPECT_EQ(diff_results(base, set_of({row("a", 10.0, (1 << 20) - 20000)}), o).exit_code(), 0);
  // A regression outranks an ambiguous result.
  const DiffReport both = diff_results(set_of({row("a", 10.0, 100), row("b", 10.0, 100)}),
                                       set_of({row("a", 11.0, 100, 0.6), row("b", 11.0, 100)}), o);
  EXPECT_EQ(both.count(Verdict::ambiguous), 3);  // a: forward, backward and step
  EXPECT_EQ(both.exit_code(), 1);
}

TEST(Diff, RowsMissingFromNewFailUnlessAllowed) {
  const ResultSet base = set_of({row("a", 10.0, 100), row("gone", 10.0, 100)});
  const ResultSet next = set_of({row("a", 10.0, 100), row("added", 50.0, 900)});
  // A renamed or dropped row must not pass a CI gate unmeasured.
  const DiffReport d = diff_results(base, next, DiffOptions{});
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[1].key.variant, "gone");
  EXPECT_EQ(d.rows[1].metrics.at(0).verdict, Verdict::failed);
  EXPECT_EQ(d.exit_code(), 1);
  ASSERT_EQ(d.only_in_new.size(), 1u);
  EXPECT_EQ(d.only_in_new[0].variant, "added");  // a new row is listed, never judged
  const std::string text = format_diff(d, TableStyle::terminal);
  EXPECT_NE(text.find("missing from new (--allow-missing accepts this)"), std::string::npos) << text;
  EXPECT_NE(text.find("only in new: blk / added"), std::string::npos) << text;

  DiffOptions allow;
  allow.allow_missing = true;
  const DiffReport allowed = diff_results(base, next, allow);
  ASSERT_EQ(allowed.rows.size(), 1u);
  EXPECT_EQ(allowed.exit_code(), 0);
  EXPECT_NE(format_diff(allowed, TableStyle::terminal).find("only in base: blk / gone"), std::string::npos);
}

TEST(Diff, FilesWithNoRowInCommonAreAnInputError) {
  ResultRow other = row("a", 10.0, 100);
  other.block = "renamed";
  try {
    diff_results(set_of({row("a", 10.0, 100)}), set_of({other}), DiffOptions{}, "main.json", "pr.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pr.json"), std::string::npos) << what;
    EXPECT_NE(what.find("main.json has blocks [blk], pr.json has blocks [renamed]"), std::string::npos) << what;
  }
}

TEST(Diff, OnlyAnAmbiguousSlowdownMakesTheResultAmbiguous) {
  const ResultSet base = set_of({row("a", 10.0, 100)});
  // A 20% speed-up whose quartiles overlap: not proven, but an improvement never fails CI.
  const DiffReport faster = diff_results(base, set_of({row("a", 8.0, 100, 0.6)}), DiffOptions{});
  EXPECT_EQ(step_verdict(faster), Verdict::ambiguous);
  EXPECT_EQ(faster.exit_code(), 0);
  EXPECT_NE(format_diff(faster, TableStyle::terminal).find("ambiguous speed-up(s) do not count"), std::string::npos);
  const DiffReport slower = diff_results(base, set_of({row("a", 12.0, 100, 0.6)}), DiffOptions{});
  EXPECT_EQ(step_verdict(slower), Verdict::ambiguous);
  EXPECT_EQ(slower.exit_code(), 3);
}

// --interleave: the headline time judged over rounds that alternate which side ran first. Every
// round is disturbed here (a shared runner), and the verdict still comes: from the pairing.
TEST(Diff, InterleavedRoundsGiveAVerdictOnADisturbedRunner) {
  auto rounds_of = [](const std::vector<double>& new_ms) {
    std::vector<ResultSet> base, next;
    for (double ms : new_ms) {
      ResultRow b = row("a", 10.0, 100), n = row("a", ms, 100);
      for (ResultRow* r : {&b, &n}) {
        r->activity = HostActivity{};
        r->activity->cpu_pressure_share = 0.9;
      }
      base.push_back(set_of({b}));
      next.push_back(set_of({n}));
    }
    return std::pair{base, next};
  };
  auto headline = [](const DiffReport& d) { return d.rows[0].metrics.front(); };
  const auto [b1, n1] = rounds_of({11.0, 11.5, 10.8, 11.2, 11.1});  // +11% in every round
  const DiffReport slower = interleaved_report(b1, n1, DiffOptions{}, "base.yaml", "new.yaml");
  EXPECT_EQ(headline(slower).metric, "step time, 5 rounds interleaved");
  EXPECT_EQ(headline(slower).verdict, Verdict::slower) << headline(slower).note;
  EXPECT_NE(headline(slower).note.find("5 of 5 round(s) disturbed"), std::string::npos) << headline(slower).note;
  EXPECT_EQ(slower.exit_code(), 1);
  const std::string text = format_diff(slower, TableStyle::terminal);
  EXPECT_NE(text.find("time 5.0% over 5 interleaved rounds that agree on the direction"), std::string::npos) << text;
  EXPECT_EQ(text.find("was disturbed:"), std::string::npos) << text;

  const auto [b2, n2] = rounds_of({10.1, 9.9, 10.2, 10.0, 10.1});  // the same build twice
  EXPECT_EQ(headline(interleaved_report(b2, n2, DiffOptions{}, "a", "b")).verdict, Verdict::same);
  EXPECT_EQ(interleaved_report(b2, n2, DiffOptions{}, "a", "b").exit_code(), 0);

  const auto [b3, n3] = rounds_of({12.0, 9.5, 12.5, 11.0, 11.5});  // beyond 5%, one round the other way
  const DiffReport unclear = interleaved_report(b3, n3, DiffOptions{}, "a", "b");
  EXPECT_EQ(headline(unclear).verdict, Verdict::ambiguous);
  EXPECT_EQ(unclear.exit_code(), 3);

  const auto [b4, n4] = rounds_of({9.0, 8.8, 9.1, 9.2, 8.9});
  EXPECT_EQ(headline(interleaved_report(b4, n4, DiffOptions{}, "a", "b")).verdict, Verdict::faster);
}

TEST(Diff, DisturbedRowsAreReportedNotJudged) {
  ResultRow loaded = row("a", 20.0, 100);
  loaded.activity = HostActivity{};
  loaded.activity->cpu_pressure_share = 0.6;
  const DiffReport d = diff_results(set_of({row("a", 10.0, 100)}), set_of({loaded}), DiffOptions{});
  EXPECT_EQ(step_verdict(d), Verdict::not_compared);
  EXPECT_EQ(d.exit_code(), 4);  // nothing regressed, but the times were not judged: no silent pass
  bool noted = false;
  for (const MetricDiff& m : d.rows[0].metrics) noted = noted || m.note == "disturbed in new: not judged";
  EXPECT_TRUE(noted);
  EXPECT_EQ(d.rows[0].disturbed, "new: a runnable task waited for a CPU 60% of the time");
  EXPECT_EQ(d.not_judged(), 3);
  const std::string text = format_diff(d, TableStyle::terminal);
  EXPECT_NE(text.find("blk / a was disturbed: new: a runnable task waited for a CPU 60% of the time\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Result: not judged (exit code 4): nothing regressed among what was judged, but 3 "
                      "comparison(s) could not be judged (see above); 3 because a run was disturbed"),
            std::string::npos)
      << text;
  DiffOptions accept;
  accept.accept_unjudged = true;
  const DiffReport accepted = diff_results(set_of({row("a", 10.0, 100)}), set_of({loaded}), accept);
  EXPECT_EQ(accepted.exit_code(), 0);
  EXPECT_NE(format_diff(accepted, TableStyle::terminal)
                .find("Result: no regression (exit code 0). 3 comparison(s) could not be judged (see above), 3 "
                      "because a run was disturbed"),
            std::string::npos);
  EXPECT_EQ(d.rows[0].metrics.back().verdict, Verdict::same);  // memory is still judged
  DiffOptions judge;
  judge.judge_disturbed = true;
  const DiffReport judged = diff_results(set_of({row("a", 10.0, 100)}), set_of({loaded}), judge);
  EXPECT_EQ(step_verdict(judged), Verdict::slower);
  EXPECT_EQ(judged.exit_code(), 1);
}

TEST(Diff, CalibrationSuggestsAThresholdAboveTheAASpread) {
  // Two runs of one build: b is 3% slower in step, 7% in forward (noise), c disturbed.
  ResultRow a2 = row("a", 10.0, 100), b2 = row("b", 10.3, 100), c2 = row("c", 30.0, 100);
  a2.forward = stats(10.0 / 3 * 1.07);
  c2.activity = HostActivity{};
  c2.activity->cpu_pressure_share = 0.5;
  const ResultSet first = set_of({row("a", 10.0, 100), row("b", 10.0, 100), row("c", 10.0, 100)});
  const Calibration c = calibrate(first, set_of({a2, b2, c2}), DiffOptions{}, "aa1.json", "aa2.json");
  EXPECT_EQ(c.disturbed_rows, 1);
  EXPECT_EQ(c.time_comparisons, 6);  // forward, backward, step of a and b
  EXPECT_NEAR(c.time_changes.back(), 0.07, 1e-9);
  EXPECT_EQ(c.false_alarms, 1);                        // a's forward is SLOWER at 5%
  EXPECT_DOUBLE_EQ(c.suggested_time_threshold, 0.11);  // 7% x 1.5, rounded up
  EXPECT_DOUBLE_EQ(c.suggested_memory_threshold, 0.01);
  const std::string text = format_calibration(c);
  EXPECT_NE(text.find("Suggested: --time-threshold 0.11"), std::string::npos) << text;
  EXPECT_NE(text.find("blk / a, forward time: +7.0%"), std::string::npos) << text;
}

TEST(Diff, RowsPairByPointAndTheWorkloadMustMatch) {
  ResultRow p1 = row("a", 10.0, 100), p2 = row("a", 10.0, 100);
  p1.point_label = "batch=1";
  p2.point_label = "batch=2";
  ResultRow p2_slow = p2;
  p2_slow.step = stats(20.0);
  const DiffReport d = diff_results(set_of({p1, p2}), set_of({p1, p2_slow}), DiffOptions{});
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(step_verdict(d, 0), Verdict::same);
  EXPECT_EQ(step_verdict(d, 1), Verdict::slower);
  EXPECT_EQ(d.rows[1].key.text(), "blk [batch=2] / a");

  ResultRow other_dtype = row("a", 10.0, 100);
  other_dtype.dtype = "float16";
  const DiffReport changed = diff_results(set_of({row("a", 10.0, 100)}), set_of({other_dtype}), DiffOptions{});
  ASSERT_EQ(changed.rows[0].metrics.size(), 1u);
  EXPECT_EQ(changed.rows[0].metrics[0].metric, "workload");
  EXPECT_NE(changed.rows[0].metrics[0].note.find("dtype"), std::string::npos);
}

// --pair-by leaves a field out: a channels-first run diffs against a channels-last one, and the
// row says what it was paired across; a key that matches two rows is refused.
TEST(Diff, PairByLeavesLayoutOutAndSaysSo) {
  ResultRow cf = row("a", 10.0, 100), cl = row("a", 12.0, 100);
  cl.layout = "channels_last";
  const DiffReport plain = diff_results(set_of({cf}), set_of({cl}), DiffOptions{});
  ASSERT_EQ(plain.rows.at(0).metrics.size(), 1u);
  EXPECT_NE(plain.rows[0].metrics[0].note.find("differs (layout)"), std::string::npos);

  DiffOptions across;
  across.pair_by = {"block", "variant", "point"};
  const DiffReport d = diff_results(set_of({cf}), set_of({cl}), across);
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].metrics.at(0).metric, "paired across");
  EXPECT_EQ(d.rows[0].metrics[0].note, "layout channels_first -> channels_last");
  EXPECT_EQ(step_verdict(d), Verdict::slower);
  EXPECT_EQ(d.exit_code(), 1);

  // A field in the key must match: float32 rows do not pair with float16 ones.
  across.pair_by = {"block", "variant", "point", "dtype"};
  ResultRow half = cl;
  half.dtype = "float16";
  EXPECT_THROW(diff_results(set_of({cf}), set_of({half}), across), InputError);

  // Two rows of one file under one key: which pair would be compared is a guess, so refuse.
  ResultRow p1 = row("a", 10.0, 100), p2 = row("a", 10.0, 100);
  p1.point_label = "batch=1";
  p2.point_label = "batch=2";
  across.pair_by = {"block", "variant"};
  EXPECT_THROW(diff_results(set_of({p1, p2}), set_of({p1}), across), InputError);

  EXPECT_THROW(check_pairing_fields({"block", "layout"}), std::invalid_argument);
  EXPECT_THROW(check_pairing_fields({"block", "variant", "colour"}), std::invalid_argument);
  EXPECT_THROW(check_pairing_fields({"block", "variant", "block"}), std::invalid_argument);
  EXPECT_NO_THROW(check_pairing_fields({"variant", "block", "mode"}));
}

TEST(Diff, ARowThatStoppedRunningIsARegression) {
  ResultRow oom = row("a", 10.0, 100);
  oom.status = RunStatus::oom;
  oom.message = "out of memory";
  const DiffReport failed = diff_results(set_of({row("a", 10.0, 100)}), set_of({oom}), DiffOptions{});
  EXPECT_EQ(failed.count(Verdict::failed), 1);
  EXPECT_EQ(failed.exit_code(), 1);
  const DiffReport fixed = diff_results(set_of({oom}), set_of({row("a", 10.0, 100)}), DiffOptions{});
  EXPECT_EQ(fixed.count(Verdict::fixed), 1);
  EXPECT_EQ(fixed.exit_code(), 0);
  const DiffReport still = diff_results(set_of({oom}), set_of({oom}), DiffOptions{});
  EXPECT_EQ(still.count(Verdict::still_failing), 1);
  EXPECT_EQ(still.exit_code(), 0);  // not new: the base already failed
}

TEST(Diff, PredictedMemoryWhenAFileHasNoMeasurement) {
  ResultRow analysed = row("a", 10.0, 1000);
  analysed.device.clear();
  analysed.measured.reset();
  analysed.forward.reset();
  analysed.backward.reset();
  analysed.step.reset();
  ResultRow grew = analysed;
  grew.predicted.peak_bytes = 2000;
  const DiffReport d = diff_results(set_of({analysed}), set_of({grew}), DiffOptions{});
  ASSERT_EQ(d.rows[0].metrics.size(), 1u);
  EXPECT_EQ(d.rows[0].metrics[0].metric, "peak memory (predicted)");
  EXPECT_EQ(d.rows[0].metrics[0].verdict, Verdict::more);
  EXPECT_EQ(d.exit_code(), 1);
}

// One pair with every kind of verdict, for the golden files (terminal and Markdown).
DiffReport mixed_report() {
  ResultRow gone = row("gone", 10.0, 100), added = row("added", 10.0, 100), oom = row("fails", 5.0, 100);
  ResultRow noisy = row("noisy", 20.0, 4 << 20, 0.6);
  oom.status = RunStatus::oom;
  oom.message = "out of memory in backward";
  const ResultSet base =
      set_of({row("same", 10.0, 1 << 20), row("slower", 10.0, 1 << 20), row("faster", 10.0, 1 << 20),
              row("noisy", 18.0, 4 << 20, 0.6), row("fatter", 10.0, 1 << 20), row("fails", 5.0, 100), gone});
  const ResultSet next = set_of({row("same", 10.2, 1 << 20), row("slower", 11.5, 1 << 20), row("faster", 8.0, 1 << 20),
                                 noisy, row("fatter", 10.0, 3 << 19), oom, added});
  return diff_results(base, next, DiffOptions{}, "base.json", "new.json");
}

// CONVBENCH_UPDATE_GOLDEN=1 rewrites the golden file instead (then read it before committing).
void expect_golden(const std::string& actual, const std::string& golden) {
  const std::string path = source_path("tests/golden/" + golden);
  if (const char* update = std::getenv("CONVBENCH_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(path, std::ios::binary) << actual;
  EXPECT_EQ(actual, read_file(path)) << golden;
}

TEST(Diff, TerminalAndMarkdownMatchTheGoldenFiles) {
  const DiffReport d = mixed_report();
  EXPECT_EQ(d.exit_code(), 1);
  expect_golden(format_diff(d, TableStyle::terminal), "diff_mixed.txt");
  expect_golden(format_diff(d, TableStyle::markdown), "diff_mixed.md");
}

class DiffCli : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const ResultSet& set) {
    const std::string path = temp_path(name);
    std::ofstream(path) << results_to_json(set).dump(2);
    files_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& f : files_) std::filesystem::remove(f);
  }
  std::vector<std::string> files_;
};

TEST_F(DiffCli, ExitCodes) {
  const std::string base = write("base.json", set_of({row("a", 10.0, 1 << 20), row("b", 10.0, 1 << 20)}));
  struct Case {
    const char* name;
    ResultSet next;
    int exit_code;
    const char* expected;
  };
  const Case cases[] = {
      {"same", set_of({row("a", 10.1, 1 << 20), row("b", 9.9, 1 << 20)}), 0, "Result: no regression (exit code 0)"},
      {"slower", set_of({row("a", 11.0, 1 << 20), row("b", 10.0, 1 << 20)}), 1, "SLOWER"},
      {"faster", set_of({row("a", 9.0, 1 << 20), row("b", 9.0, 1 << 20)}), 0, "FASTER"},
      {"ambiguous", set_of({row("a", 11.0, 1 << 20, 0.6), row("b", 10.0, 1 << 20)}), 3, "--min-samples 30"},
      {"memory", set_of({row("a", 10.0, 2 << 20), row("b", 10.0, 1 << 20)}), 1, "MORE"},
      {"missing", set_of({row("a", 10.0, 1 << 20)}), 1, "missing from new"},
      {"faster-but-ambiguous", set_of({row("a", 8.0, 1 << 20, 0.6), row("b", 10.0, 1 << 20)}), 0, "ambiguous speed-up"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string next = write(std::string(c.name) + ".json", c.next);
    const auto r = run_cli("diff " + base + " " + next);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.out << r.err;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << r.out;
  }
}

TEST_F(DiffCli, MarkdownFileForAPullRequest) {
  const std::string base = write("mb.json", set_of({row("a", 10.0, 1 << 20)}));
  const std::string next = write("mn.json", set_of({row("a", 12.0, 1 << 20)}));
  const std::string md = temp_path("diff.md");
  files_.push_back(md);
  const auto r = run_cli("diff " + base + " " + next + " --markdown " + md + " --time-threshold 0.1");
  EXPECT_EQ(r.exit_code, 1);
  const std::string text = read_file(md);
  // The verdict first, the unchanged rows folded away.
  EXPECT_EQ(text.rfind("## convbench diff: Result: 3 regressions (exit code 1).", 0), 0u) << text;
  EXPECT_NE(text.find("<details><summary>1 unchanged</summary>"), std::string::npos) << text;
  EXPECT_LT(text.find("**SLOWER**"), text.find("<details>"));
  EXPECT_NE(text.find("| blk / a | step time |"), std::string::npos) << text;
  EXPECT_NE(text.find("**SLOWER**"), std::string::npos);
  EXPECT_NE(text.find("time 10.0%"), std::string::npos);
  // Under a 25% threshold the 20% change is the same.
  EXPECT_EQ(run_cli("diff " + base + " " + next + " --time-threshold 0.25").exit_code, 0);
}

TEST_F(DiffCli, CalibrateReportsTheAASpread) {
  const std::string a = write("aa1.json", set_of({row("a", 10.0, 1 << 20), row("b", 10.0, 1 << 20)}));
  const std::string b = write("aa2.json", set_of({row("a", 10.4, 1 << 20), row("b", 9.8, 1 << 20)}));
  const auto r = run_cli("diff --calibrate " + a + " " + b);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("6 timed comparisons"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("largest 4.0% (blk / a, forward time: +4.0%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Suggested: --time-threshold 0.06 --memory-threshold 0.01"), std::string::npos) << r.out;
}

TEST_F(DiffCli, PairByOnTheCommandLine) {
  ResultRow cl = row("a", 10.0, 1 << 20);
  cl.layout = "channels_last";
  const std::string base = write("pair_cf.json", set_of({row("a", 10.0, 1 << 20)}));
  const std::string next = write("pair_cl.json", set_of({cl}));
  auto r = run_cli("diff " + base + " " + next + " --pair-by block,variant,point");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("layout channels_first -> channels_last"), std::string::npos) << r.out;
  r = run_cli("diff " + base + " " + next + " --pair-by block,layout");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--pair-by"), std::string::npos) << r.err;
}

TEST_F(DiffCli, BadInputExitsTwo) {
  const std::string good = write("good.json", set_of({row("a", 10.0, 100)}));
  const auto missing = run_cli("diff " + good + " /nonexistent/new.json");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("error: /nonexistent/new.json: cannot open the results file"), std::string::npos)
      << missing.err;
  const std::string malformed = temp_path("malformed.json");
  files_.push_back(malformed);
  std::ofstream(malformed) << "{\"schema\": \"convbench.results/1\", \"results\": [";
  const auto bad = run_cli("diff " + malformed + " " + good);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("error: " + malformed +
                         ":1:47: malformed JSON: syntax error while parsing value - unexpected end of input"),
            std::string::npos)
      << bad.err;
  EXPECT_TRUE(bad.out.empty());
  const std::string wrong_row = temp_path("wrong_row.json");
  files_.push_back(wrong_row);
  std::ofstream(wrong_row) << R"({"schema": "convbench.results/1", "results": [{"block": "b", "variant": 3}]})";
  const auto row_error = run_cli("diff " + good + " " + wrong_row);
  EXPECT_EQ(row_error.exit_code, 2);
  EXPECT_NE(row_error.err.find(wrong_row + ": results[0].variant: expected a string, got the integer 3"),
            std::string::npos)
      << row_error.err;
  ResultSet renamed = set_of({row("a", 10.0, 100)});
  renamed.rows[0].block = "blk2";
  const auto unpaired = run_cli("diff " + good + " " + write("renamed.json", renamed));
  EXPECT_EQ(unpaired.exit_code, 2);
  EXPECT_NE(unpaired.err.find("no row pairs with a row of"), std::string::npos) << unpaired.err;
  EXPECT_NE(unpaired.err.find("has blocks [blk2]"), std::string::npos) << unpaired.err;
  EXPECT_TRUE(unpaired.out.empty());
  EXPECT_EQ(run_cli("diff " + good).exit_code, 2);                                        // NEW missing
  EXPECT_EQ(run_cli("diff " + good + " " + good + " --time-threshold -1").exit_code, 2);  // negative threshold
}

// diff --interleave end to end: two specs measured here in alternating rounds. A block whose
// kernel grew needs more memory (deterministic: exit 1) and gets an interleaved time verdict.
TEST_F(DiffCli, InterleaveMeasuresTwoSpecsInRoundsAndJudgesThem) {
  const std::string spec =
      "name: ci\nblocks:\n  - name: blk\n    dims: 2\n    batch: 2\n    size: 8\n    in_channels: 8\n"
      "    out_channels: 8\n    kernel: KERNEL\n    variants: [standard, separable]\n";
  const std::string base = temp_path("interleave-base.yaml"), next = temp_path("interleave-new.yaml");
  std::ofstream(base) << std::regex_replace(spec, std::regex("KERNEL"), "3");
  std::ofstream(next) << std::regex_replace(spec, std::regex("KERNEL"), "5");
  files_ = {base, next};
  const std::string budget = " --device cpu --min-time 0 --min-samples 3 --timeout 0.2 --rounds 2 -q";
  const auto r = run_cli("diff --interleave " + base + " " + next + budget);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("blk / standard   step time, 2 rounds interleaved"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MORE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blk / standard: the graph changed: structure: conv 3x3"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("not judged: "), std::string::npos) << r.out;
  // The same spec twice: every row's time is judged (whatever the load), its memory the same.
  const auto same = run_cli("diff --interleave " + base + " " + base + budget);
  EXPECT_NE(same.exit_code, 2) << same.err;
  EXPECT_NE(same.out.find(", 0 not judged; memory: 0 more, 0 less"), std::string::npos) << same.out;
  // Results-file options that do not apply to two specs are refused.
  const auto bad = run_cli("diff --interleave --calibrate " + base + " " + next + budget);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--calibrate"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace convbench

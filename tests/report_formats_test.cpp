// Every output format rendered from one saved results file (tests/data/results/measured.json,
// written once by `compare --device reference` and committed) against golden files, plus the
// properties each format promises: Google Benchmark's JSON schema, a self-contained HTML report
// with its three plots, booktabs LaTeX, colour only on a terminal, achieved rates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "report/gbench_json.hpp"
#include "report/html_report.hpp"
#include "report/latex_table.hpp"
#include "report/report_formats.hpp"
#include "report/result_columns.hpp"
#include "report/summary_tables.hpp"
#include "report/svg_plot.hpp"
#include "results/device_limits.hpp"
#include "results/json_results.hpp"
#include "util/input_error.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::run_cli;
using testing::source_path;

const std::string kMeasured = "tests/data/results/measured.json";
const std::string kAnalyzed = "tests/data/results/analyzed.json";

ResultSet measured() { return load_results_file(source_path(kMeasured)); }

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// A training row with round numbers: 1 TFLOP forward + 1 TFLOP backward, 3 GB moved, 1 s step.
ResultRow round_row(const std::string& variant, double step_ms) {
  ResultRow r;
  r.block = "b";
  r.variant = variant;
  r.kind = "standard";
  r.mode = "train";
  r.dtype = "float32";
  r.layout = "channels_first";
  r.input_shape = {1, 8, 8, 8};
  r.params = 100;
  r.flops = {1'000'000'000'000, 400'000'000'000, 600'000'000'000};
  r.bytes_forward = 1'000'000'000;
  r.bytes_backward = 2'000'000'000;
  r.predicted.peak_bytes = 1 << 20;
  r.device = "cpu";
  r.measured = r.predicted;
  TimeStats t;
  t.median = t.mean = t.q1 = t.q3 = t.min = t.max = step_ms;
  t.raw_ms = {step_ms, step_ms, step_ms};
  r.forward = r.backward = r.step = t;
  return r;
}

TEST(ReportFormats, EveryFormatMatchesItsGoldenFile) {
  const std::pair<const char*, const char*> formats[] = {
      {"table", "report_measured.txt"}, {"md", "report_measured.md"},
      {"csv", "report_measured.csv"},   {"latex", "report_measured.tex"},
      {"html", "report_measured.html"}, {"gbench-json", "report_measured.gbench.json"}};
  for (const auto& [format, golden] : formats) {
    SCOPED_TRACE(format);
    const auto r = run_cli("report " + source_path(kMeasured) + " --format " + format);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, read_file(source_path(std::string("tests/golden/") + golden)));
  }
}

// A run's warnings are stated once: the formats that say they state them do (so compare does
// not repeat them on stderr), the others do not (so compare prints them there).
TEST(ReportFormats, TheFormatsThatStateTheWarningsAreTheOnesThatDo) {
  ResultSet set;
  set.engine = "convbench";
  set.device = "cpu";
  ResultRow row = round_row("standard", 10.0);
  row.status = RunStatus::ok;
  row.graph_message = "capture failed for a test";
  set.rows.push_back(row);
  int stating = 0;
  for (const std::string& format : report_format_names()) {
    SCOPED_TRACE(format);
    const bool states =
        render_results(set, format).find("no graph replay: capture failed for a test") != std::string::npos;
    EXPECT_EQ(states, format_states_warnings(format));
    stating += states ? 1 : 0;
  }
  EXPECT_EQ(stating, 4);  // table, md, latex, html
}

// The one table of formats: what the CLI registers, checks and writes follows from it, so its
// entries must be distinct, and the flags keep the order --help has always shown them in.
TEST(ReportFormats, EveryTableMarksARowWhoseTimesCannotBeTrusted) {
  // loaded.json: every row timed beside two busy loops (tests/data/doc-examples/shared/README.md).
  // The LaTeX body says so at each row and its caption says what it means, not only a % comment.
  const std::string loaded = testing::source_path("tests/data/doc-examples/shared/loaded.json");
  const auto tex = testing::run_cli("report " + loaded + " --format latex");
  ASSERT_EQ(tex.exit_code, 0) << tex.err;
  EXPECT_NE(tex.out.find("\\midrule\nstandard (base) (disturbed) & "), std::string::npos) << tex.out;
  EXPECT_NE(tex.out.find("\nseparable (disturbed) & "), std::string::npos) << tex.out;
  EXPECT_NE(tex.out.find("Rows marked disturbed were timed while the machine was busy"), std::string::npos) << tex.out;
  // Its figures draw those rows' points hollow, and their legend says what hollow means.
  const auto html = testing::run_cli("report " + loaded + " --format html");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("class=\"point untrusted\""), std::string::npos);
  EXPECT_NE(html.out.find(">time not trusted<"), std::string::npos);
  EXPECT_NE(html.out.find("<title>separable (disturbed): x "), std::string::npos);
  // A quiet run's table has neither.
  const auto quiet =
      testing::run_cli("report " + testing::source_path("tests/data/doc-examples/shared/aa1.json") + " --format latex");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out.find("(disturbed)"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find("Rows marked"), std::string::npos) << quiet.out;
  const auto quiet_html =
      testing::run_cli("report " + testing::source_path("tests/data/doc-examples/shared/aa1.json") + " --format html");
  ASSERT_EQ(quiet_html.exit_code, 0) << quiet_html.err;
  EXPECT_EQ(quiet_html.out.find("untrusted"), std::string::npos);
  EXPECT_EQ(quiet_html.out.find("time not trusted"), std::string::npos);
}

TEST(ReportFormats, ASweepOverTwoFieldsDrawsOneLabelledLinePerVariantAndOtherValue) {
  // Swept over batch and layout: against batch, each variant in each layout is its own line with
  // its own legend entry, never one line zigzagging between the layouts' points.
  const std::string spec = testing::temp_path("two-axes.yaml");
  std::ofstream(spec) << "sweep:\n  batch: [1, 2]\n  layout: [channels_first, channels_last]\nblocks:\n"
                         "  - {name: b, in_channels: 4, out_channels: 4, size: 6, variants: [standard, separable]}\n";
  const auto r = testing::run_cli("compare " + spec +
                                  " --device reference --min-samples 2 --min-time 0 --timeout 1 -q --format html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t begin = r.out.find("id=\"time-vs-batch-0\"");
  ASSERT_NE(begin, std::string::npos);
  const std::string svg = r.out.substr(begin, r.out.find("</svg>", begin) - begin);
  size_t lines = 0;
  for (size_t at = svg.find("class=\"series-line\""); at != std::string::npos;
       at = svg.find("class=\"series-line\"", at + 1))
    ++lines;
  EXPECT_EQ(lines, 4u) << svg;
  // Entries past 22 characters break at a space: "standard" / "channels_first".
  for (const char* entry :
       {">standard<", ">channels_first<", ">standard channels_last<", ">separable<", ">channels_last<"})
    EXPECT_NE(svg.find(entry), std::string::npos) << entry << "\n" << svg;
}

TEST(ReportFormats, AHollowPointIsAnUntrustedOneAndTheLegendSaysSo) {
  LogLogPlot plot{
      .id = "p", .css_class = "plot", .title = "t", .x_label = "x", .y_label = "y", .points = {}, .roof = {}};
  plot.points.push_back({.label = "a", .x = 1, .y = 2, .y_lo = 0, .y_hi = 0, .series = "", .distrust = ""});
  plot.points.push_back({.label = "b", .x = 2, .y = 3, .y_lo = 0, .y_hi = 0, .series = "", .distrust = "noisy"});
  const std::string svg = render_loglog_svg(plot);
  EXPECT_EQ(svg.find("class=\"point untrusted\""), svg.rfind("class=\"point untrusted\""));  // once: b
  EXPECT_NE(svg.find("<title>b (noisy): x 2"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>a: x 1"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">time not trusted<"), std::string::npos);
  plot.points.pop_back();
  EXPECT_EQ(render_loglog_svg(plot).find("not trusted"), std::string::npos);
}

TEST(ReportFormats, TheTableOfFormatsNamesEachOnceAndKeepsTheFlagOrder) {
  std::set<std::string> names, flags;
  for (const OutputFormat& f : output_formats()) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(names.insert(f.name).second);
    EXPECT_NE(f.render, nullptr);
    EXPECT_EQ(&output_format(f.name), &f);
    if (f.flag.empty()) continue;
    EXPECT_TRUE(flags.insert(f.flag).second);
    EXPECT_EQ(f.flag.rfind("--", 0), 0u);
    EXPECT_FALSE(f.flag_help.empty());
  }
  EXPECT_EQ(report_format_names(),
            (std::vector<std::string>{"table", "md", "csv", "latex", "html", "gbench-json", "json"}));
  std::vector<std::string> flag_order;
  for (const OutputFormat* f : file_output_formats()) flag_order.push_back(f->flag);
  EXPECT_EQ(flag_order,
            (std::vector<std::string>{"--json", "--csv", "--markdown", "--latex", "--gbench-json", "--html"}));
  EXPECT_THROW(output_format("yaml"), std::invalid_argument);
}

TEST(ReportFormats, JsonRoundTripsByteForByte) {
  // The JSON is the source of truth: reading and writing it again loses nothing (raw samples included).
  EXPECT_EQ(render_results(measured(), "json"), read_file(source_path(kMeasured)));
  const auto doc = json::parse(read_file(source_path(kMeasured)));
  EXPECT_EQ(doc["results"][0]["time_ms"]["step"]["raw_ms"].size(), 7u);
}

TEST(ReportFormats, AchievedRatesAreFlopsAndBytesOverTheMedianStep) {
  ResultSet set;
  set.rows = {round_row("standard", 1000.0), round_row("other", 250.0)};
  set.rows[0].is_baseline = true;
  const TextTable t = block_tables(set).front().table;
  const auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(t.header.begin(), t.header.end(), name) - t.header.begin());
  };
  ASSERT_LT(col("TFLOP/s"), t.header.size());
  ASSERT_LT(col("GB/s"), t.header.size());
  EXPECT_EQ(t.rows[0][col("TFLOP/s")], "2.00");  // 2e12 FLOPs / 1 s
  EXPECT_EQ(t.rows[0][col("GB/s")], "3.00");     // 3e9 bytes / 1 s
  EXPECT_EQ(t.rows[1][col("TFLOP/s")], "8.00");  // same work in 0.25 s
  EXPECT_EQ(t.rows[1][col("GB/s")], "12.0");
  EXPECT_EQ(t.rows[1][col("step x")], "0.25x");
}

TEST(ReportFormats, ColourOnlyWhenAskedAndOnlyOnTheTimeRatio) {
  ResultSet set;
  set.rows = {round_row("base", 10.0), round_row("faster", 5.0), round_row("slower", 20.0), round_row("equal", 10.001)};
  set.rows[0].is_baseline = true;
  const std::string plain = format_tables(set, TableStyle::terminal, false);
  const std::string coloured = format_tables(set, TableStyle::terminal, true);
  EXPECT_EQ(plain.find('\033'), std::string::npos);
  EXPECT_EQ(count_of(coloured, "\033[32m"), 1u);  // faster: green
  EXPECT_EQ(count_of(coloured, "\033[31m"), 1u);  // slower: red
  EXPECT_NE(coloured.find("\033[32m 0.50x\033[0m"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("\033[31m 2.00x\033[0m"), std::string::npos) << coloured;
  // Without the escape codes the coloured table is the plain one: alignment is unchanged.
  EXPECT_EQ(std::regex_replace(coloured, std::regex("\033\\[[0-9]+m"), ""), plain);
  EXPECT_EQ(format_tables(set, TableStyle::markdown, true).find('\033'), std::string::npos);
  // The CLI's stdout is a pipe here, so no colour reaches it.
  const auto r = run_cli("report " + source_path(kMeasured));
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

TEST(ReportFormats, GbenchJsonFollowsGoogleBenchmarksSchema) {
  const ResultSet set = measured();
  const json doc = json::parse(render_results(set, "gbench-json"));
  ASSERT_TRUE(doc.is_object());
  ASSERT_TRUE(doc.contains("context") && doc["context"].is_object());
  ASSERT_TRUE(doc.contains("benchmarks") && doc["benchmarks"].is_array());
  const json& c = doc["context"];
  for (const char* key : {"date", "host_name", "executable", "library_build_type"}) {
    ASSERT_TRUE(c.contains(key)) << key;
    EXPECT_TRUE(c[key].is_string()) << key;
  }
  for (const char* key : {"num_cpus", "mhz_per_cpu", "json_schema_version"}) {
    ASSERT_TRUE(c.contains(key)) << key;
    EXPECT_TRUE(c[key].is_number_integer()) << key;
  }
  ASSERT_TRUE(c.contains("cpu_scaling_enabled"));
  EXPECT_TRUE(c["cpu_scaling_enabled"].is_boolean());
  ASSERT_TRUE(c.contains("caches"));
  EXPECT_TRUE(c["caches"].is_array());
  EXPECT_EQ(c["json_schema_version"], 1);
  EXPECT_EQ(c["num_cpus"], set.provenance["hardware_threads"]);
  EXPECT_EQ(c["date"], set.provenance["date"]);

  std::set<std::string> aggregate_names;
  size_t iterations = 0, aggregates = 0;
  for (const json& b : doc["benchmarks"]) {
    for (const char* key : {"name", "run_name", "run_type", "time_unit"}) {
      ASSERT_TRUE(b.contains(key) && b[key].is_string()) << key << " in " << b.dump();
    }
    for (const char* key : {"family_index", "per_family_instance_index", "repetitions", "threads", "iterations"}) {
      ASSERT_TRUE(b.contains(key) && b[key].is_number_integer()) << key << " in " << b.dump();
    }
    for (const char* key : {"real_time", "cpu_time"}) ASSERT_TRUE(b.contains(key) && b[key].is_number()) << key;
    EXPECT_EQ(b["real_time"], b["cpu_time"]);
    EXPECT_EQ(b["time_unit"], "ns");  // compare.py prints whole units: ns keeps the digits
    if (b["run_type"] == "iteration") {
      ++iterations;
      EXPECT_EQ(b["name"], b["run_name"]);  // repetitions share the name
      ASSERT_TRUE(b.contains("repetition_index") && b["repetition_index"].is_number_integer());
    } else {
      ++aggregates;
      ASSERT_EQ(b["run_type"], "aggregate");
      ASSERT_TRUE(b.contains("aggregate_name") && b["aggregate_name"].is_string());
      EXPECT_EQ(b["name"], b["run_name"].get<std::string>() + "_" + b["aggregate_name"].get<std::string>());
      EXPECT_EQ(b["aggregate_unit"], b["aggregate_name"] == "cv" ? "percentage" : "time");
      EXPECT_TRUE(aggregate_names.insert(b["name"].get<std::string>()).second) << "duplicate " << b["name"];
    }
  }
  // 6 train rows (2 points x 3) x 3 phases and 4 infer rows x 1 phase, 7 samples each: one
  // repetition per sample, and 4 aggregates per phase.
  const size_t phases = 6u * 3 + 4u * 1;
  EXPECT_EQ(iterations, phases * 7);
  EXPECT_EQ(aggregates, phases * 4);

  // Values come from the raw samples, in nanoseconds: repetition i is sample i, in the order
  // taken; the median aggregate (listed first) is their median.
  const ResultRow& row = set.rows[1];
  const std::vector<double> taken = row.step->raw_ms;
  std::vector<double> raw = taken;
  std::sort(raw.begin(), raw.end());
  const double median = raw[raw.size() / 2];  // 7 samples: the middle one
  const std::string name = "conv_2d/bottleneck/batch=1/step";
  bool median_first = false;
  for (size_t i = 0; i < doc["benchmarks"].size(); ++i) {
    const json& b = doc["benchmarks"][i];
    if (b["name"] == name) {
      EXPECT_EQ(b["iterations"], 1);
      EXPECT_EQ(b["repetitions"], 7);
      const size_t k = b["repetition_index"].get<size_t>();
      EXPECT_NEAR(b["real_time"].get<double>(), taken.at(k) * 1e6, 1e-6);
      if (k == 6) median_first = doc["benchmarks"][i + 1]["name"] == name + "_median";
    }
    if (b["name"] == name + "_median") {
      EXPECT_NEAR(b["real_time"].get<double>(), median * 1e6, 1e-6);
    }
  }
  EXPECT_TRUE(median_first);
  EXPECT_TRUE(aggregate_names.count(name + "_stddev") && aggregate_names.count(name + "_cv") &&
              aggregate_names.count(name + "_mean"));
}

TEST(ReportFormats, GbenchJsonCutsManySamplesIntoConsecutiveRepetitions) {
  ResultSet set;
  ResultRow r;
  r.block = "b";
  r.variant = "v";
  r.mode = "infer";
  r.device = "cpu";
  std::vector<double> raw;
  for (int i = 0; i < 100; ++i) raw.push_back(1.0 + i);  // 1..100 ms
  TimeStats t;
  t.raw_ms = raw;
  t.median = t.mean = 50.5;
  r.forward = t;
  set.rows.push_back(r);
  const auto doc = results_to_gbench_json(set);
  std::vector<double> reps;
  int64_t iterations = 0;
  for (const auto& b : doc["benchmarks"])
    if (b["run_type"] == "iteration") {
      reps.push_back(b["real_time"].get<double>());
      iterations += b["iterations"].get<int64_t>();
      EXPECT_EQ(b["repetitions"], kGbenchMaxRepetitions);
    }
  ASSERT_EQ(reps.size(), static_cast<size_t>(kGbenchMaxRepetitions));
  EXPECT_EQ(iterations, 100);  // every sample in exactly one repetition
  // Repetition 0 holds samples 0..2 (100 * 1 / 32 = 3): the mean of 1, 2, 3 ms.
  EXPECT_DOUBLE_EQ(reps[0], 2.0 * 1e6);
  EXPECT_TRUE(std::is_sorted(reps.begin(), reps.end()));  // consecutive runs keep the order
}

TEST(ReportFormats, GbenchJsonLeavesOutRowsWithoutTiming) {
  ResultSet set;
  set.rows = {round_row("ran", 10.0), round_row("oom", 10.0), round_row("analysed", 10.0)};
  set.rows[1].status = RunStatus::oom;
  set.rows[2].device.clear();
  set.rows[2].forward.reset();
  set.rows[2].backward.reset();
  set.rows[2].step.reset();
  const auto doc = results_to_gbench_json(set);
  ASSERT_EQ(doc["benchmarks"].size(), 3u * (3 + 4));  // 3 phases: 3 samples as repetitions, 4 aggregates
  for (const auto& b : doc["benchmarks"])
    EXPECT_EQ(b["run_name"].get<std::string>().rfind("b/ran/", 0), 0u) << b["name"];
  EXPECT_EQ(results_to_gbench_json(load_results_file(source_path(kAnalyzed)))["benchmarks"].size(), 0u);
}

TEST(ReportFormats, HtmlIsSelfContainedWithThreeLabelledPlotsPerBlock) {
  const std::string html = render_results(measured(), "html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(testing::without_svg_namespace(html).find("http"), std::string::npos);  // no external reference of any kind
  for (const char* forbidden : {"<script", "<link", "src=", "href=", "@import", "url("})
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  // 4 blocks x 3 plots, and 2 blocks swept over batch x (time, throughput)
  EXPECT_EQ(count_of(html, "<svg "), 16u);
  EXPECT_EQ(count_of(html, "</svg>"), 16u);
  EXPECT_EQ(count_of(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" "), 16u);  // each stands alone too
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"time-vs-batch-0\" class=\"plot time-vs-sweep\""),
            std::string::npos);
  for (int block = 0; block < 4; ++block) {
    for (const char* plot : {"time-vs-flops", "memory-breakdown", "roofline"}) {
      const std::string open = "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" + std::string(plot) + "-" +
                               std::to_string(block) + "\" class=\"plot " + plot + "\"";
      const size_t at = html.find(open);
      ASSERT_NE(at, std::string::npos) << open;
      const std::string svg = html.substr(at, html.find("</svg>", at) - at);
      EXPECT_NE(svg.find("class=\"axis-label x-label\""), std::string::npos) << plot;
      EXPECT_NE(svg.find("class=\"axis-label y-label\""), std::string::npos) << plot;
    }
  }
  const size_t t = html.find("id=\"time-vs-flops-0\" class=");
  const std::string time_plot = html.substr(t, html.find("</svg>", t) - t);
  EXPECT_NE(time_plot.find("FLOPs per training step"), std::string::npos);
  EXPECT_NE(time_plot.find("median step time, ms"), std::string::npos);
  for (const char* variant : {">standard<", ">bottleneck<", ">separable<"})
    EXPECT_NE(time_plot.find(variant), std::string::npos);
  EXPECT_EQ(count_of(time_plot, "<circle class=\"point\""), 3u);
  const size_t m = html.find("id=\"memory-breakdown-0\" class=");
  const std::string memory_plot = html.substr(m, html.find("</svg>", m) - m);
  for (const char* category : {"parameters", "buffers", "gradients", "inputs", "saved", "temporaries", "workspace"})
    EXPECT_NE(memory_plot.find(std::string(">") + category + "<"), std::string::npos) << category;
  EXPECT_NE(memory_plot.find("standard (meas.)"), std::string::npos);
  // The CPU's limits are not known: points, no roof, and the report says so.
  EXPECT_EQ(html.find("class=\"roof-line\""), std::string::npos);
  EXPECT_NE(html.find("Device limits unknown"), std::string::npos);
}

TEST(ReportFormats, HtmlMemoryBarsAddUpToTheMeasuredBreakdown) {
  ResultSet set;
  set.rows = {round_row("a", 1.0)};
  set.rows[0].measured->at_peak = {1 << 20, 0, 0, 2 << 20, 3 << 20, 0, 0};  // 1 + 2 + 3 MiB
  const std::string html = format_html(set);
  EXPECT_NE(html.find("a (meas.), parameters: 1.00 MiB"), std::string::npos);
  EXPECT_NE(html.find("a (meas.), inputs: 2.00 MiB"), std::string::npos);
  EXPECT_NE(html.find("a (meas.), saved: 3.00 MiB"), std::string::npos);
  EXPECT_NE(html.find(">6.00</text>"), std::string::npos);  // the bar's total
}

TEST(ReportFormats, HtmlOfAnAnalysisSaysWhichPlotsNeedTiming) {
  const std::string html = render_results(load_results_file(source_path(kAnalyzed)), "html");
  EXPECT_EQ(testing::without_svg_namespace(html).find("http"), std::string::npos);
  EXPECT_EQ(count_of(html, "<svg "), 4u);  // the memory breakdown only, one per block
  EXPECT_EQ(count_of(html, "class=\"no-plot time-vs-flops\""), 4u);
  EXPECT_EQ(count_of(html, "class=\"no-plot roofline\""), 4u);
  EXPECT_NE(html.find("no timing in these results"), std::string::npos);
  EXPECT_NE(html.find("standard (pred.)"), std::string::npos);
  EXPECT_NE(html.find("predicted by convbench&#39;s memory model"), std::string::npos);
}

TEST(ReportFormats, RooflineDrawsTheRoofOfAKnownGpu) {
  ResultSet set = measured();
  set.provenance["gpu_name"] = "NVIDIA H100 80GB HBM3";
  const std::string html = format_html(set);
  EXPECT_EQ(count_of(html, "class=\"roof-line\""), 4u);
  EXPECT_NE(html.find("67.0 TFLOP/s"), std::string::npos);
  EXPECT_NE(html.find("3.35 TB/s"), std::string::npos);
  EXPECT_NE(html.find("Roof: H100 SXM datasheet (float32, dense)"), std::string::npos);
  EXPECT_EQ(html.find("Device limits unknown"), std::string::npos);
  EXPECT_EQ(testing::without_svg_namespace(html).find("http"), std::string::npos);
}

TEST(ReportFormats, DeviceLimitsFromProvenanceOrKnownGpus) {
  json p = {{"device_limits", {{"peak_flops", 1e12}, {"bandwidth_bytes_per_s", 2e11}, {"source", "measured"}}},
            {"gpu_name", "NVIDIA H100 80GB HBM3"}};
  auto l = device_limits(p, "float32");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->peak_flops, 1e12);
  EXPECT_EQ(l->bandwidth_bytes_per_s, 2e11);
  EXPECT_EQ(l->source, "measured");
  p.erase("device_limits");
  EXPECT_EQ(device_limits(p, "float32")->peak_flops, 67e12);
  EXPECT_EQ(device_limits(p, "tf32")->peak_flops, 495e12);
  EXPECT_EQ(device_limits(p, "bfloat16")->peak_flops, 989e12);
  EXPECT_EQ(device_limits(p, "float16")->bandwidth_bytes_per_s, 3.35e12);
  EXPECT_EQ(device_limits({{"device_name", "NVIDIA H200"}}, "float32")->bandwidth_bytes_per_s, 4.8e12);
  EXPECT_EQ(device_limits({{"gpu", {{"name", "NVIDIA H200"}}}}, "float16")->peak_flops, 989e12);
  EXPECT_EQ(device_limits({{"gpu_name", "NVIDIA H100 PCIe"}}, "float32")->peak_flops, 51e12);  // its own datasheet
  EXPECT_FALSE(device_limits({{"gpu_name", "NVIDIA H100 NVL"}}, "float32"));  // not in the table: not guessed
  EXPECT_FALSE(device_limits({{"device_name", "AMD EPYC"}}, "float32"));
  EXPECT_FALSE(device_limits(json::object(), "float32"));
}

TEST(ReportFormats, LatexIsBooktabsWithEscapedNamesAndUnits) {
  const std::string tex = render_results(measured(), "latex");
  EXPECT_EQ(count_of(tex, "\\begin{tabular}"), 4u);
  EXPECT_EQ(count_of(tex, "\\toprule"), 4u);
  EXPECT_EQ(count_of(tex, "\\midrule"), 4u);
  EXPECT_EQ(count_of(tex, "\\bottomrule"), 4u);
  EXPECT_EQ(tex.find("\\hline"), std::string::npos);
  EXPECT_EQ(tex.find("siunitx"), std::string::npos);
  EXPECT_NE(tex.find("conv\\_2d"), std::string::npos);
  EXPECT_EQ(tex.find("conv_2d"), std::string::npos);
  // Grouped headers: a \multicolumn over each group, ruled by \cmidrule; units on the second line.
  EXPECT_NE(tex.find("Variant & \\multicolumn{2}{c}{Step} & \\multicolumn{2}{c}{Peak memory} & "
                     "\\multicolumn{2}{c}{Cost} \\\\\n\\cmidrule(lr){2-3}\\cmidrule(lr){4-5}\\cmidrule(lr){6-7}\n"
                     " & (ms) & ($\\times$) & (MiB) & ($\\times$) & FLOP ($\\times$) & Params ($\\times$) \\\\\n"
                     "\\midrule"),
            std::string::npos)
      << tex;
  // An inference block's headline is the forward pass.
  EXPECT_NE(tex.find("Variant & \\multicolumn{2}{c}{Forward} &"), std::string::npos) << tex;
  // Chosen columns, in order; noise gets its own column.
  const std::string chosen = format_latex(measured(), {"time_ms", "noise", "samples_per_s"});
  EXPECT_NE(chosen.find("Variant & \\multicolumn{2}{c}{Step} & Throughput \\\\\n\\cmidrule(lr){2-3}\n"
                        " & (ms) & $\\pm$ (\\%) & (samples/s) \\\\"),
            std::string::npos)
      << chosen;
  EXPECT_THROW(format_latex(measured(), {"time_ms", "speed"}), std::invalid_argument);
  // Every row of every tabular has as many cells as the column specification says.
  int tables = 0;
  for (size_t at = tex.find("\\begin{tabular}{"); at != std::string::npos; at = tex.find("\\begin{tabular}{", at + 1)) {
    const size_t spec_start = at + std::string("\\begin{tabular}{").size();
    const size_t columns = tex.find('}', spec_start) - spec_start;
    const std::string body = tex.substr(spec_start, tex.find("\\bottomrule", at) - spec_start);
    size_t lines = 0;
    for (size_t start = 0, end; (end = body.find("\n", start)) != std::string::npos; start = end + 1) {
      const std::string line = body.substr(start, end - start);
      if (line.size() < 3 || line.substr(line.size() - 3) != " \\\\") continue;
      size_t cells = count_of(line, " & ") + 1;  // a \multicolumn{n} cell spans n columns
      for (size_t m = line.find("\\multicolumn{"); m != std::string::npos; m = line.find("\\multicolumn{", m + 1))
        cells += std::stoul(line.substr(m + std::string("\\multicolumn{").size())) - 1;
      EXPECT_EQ(cells, columns) << line;
      ++lines;
    }
    EXPECT_EQ(lines, body.find("{Step}") != std::string::npos ? 5u : 4u);  // two header lines + variants
    ++tables;
  }
  EXPECT_EQ(tables, 4);
}

// Compiles `tables` in a one-column article on letter paper with default margins; returns the log
// ("" and a failure when pdflatex fails).
std::string compile_one_column(const std::string& tables, const std::string& name) {
  const std::string dir = testing::temp_path(name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/tables.tex") << tables;
  std::ofstream(dir + "/doc.tex") << "\\documentclass[letterpaper]{article}\n\\usepackage{booktabs}\n"
                                     "\\begin{document}\n\\input{tables.tex}\n\\end{document}\n";
  const int rc = std::system(
      ("cd " + dir + " && pdflatex -interaction=nonstopmode -halt-on-error doc.tex > log.txt 2>&1").c_str());
  const std::string log = read_file(dir + "/doc.log");
  EXPECT_EQ(rc, 0) << read_file(dir + "/log.txt");
  std::filesystem::remove_all(dir);
  return log;
}

TEST(ReportFormats, LatexSaysWhichPassItsMacsAreOf) {
  // A training block's default LaTeX analysis shows the forward pass's GFLOP and GMAC under a
  // header that says so: the seed's standard variant has 2.718 GMAC forward, 5.436 per step.
  const auto r = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --format latex");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\\multicolumn{2}{c}{Forward cost}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" & (GFLOP) & (GMAC) & "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("standard (base) & 13,920 & 5.48 & 2.72 & "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("5.44"), std::string::npos) << r.out;
  // The step's MACs are a column of their own, labelled as such.
  const auto step = run_cli("analyze " + source_path("configs/seed-blocks.yaml") +
                            " --format latex --latex-columns gmac_fwd,gmac_step");
  ASSERT_EQ(step.exit_code, 0) << step.err;
  EXPECT_NE(step.out.find("Variant & Forward cost & Step cost \\\\\n & (GMAC) & (GMAC)"), std::string::npos)
      << step.out;
  EXPECT_NE(step.out.find("standard (base) & 2.72 & 5.44 \\\\"), std::string::npos) << step.out;
}

TEST(ReportFormats, EveryColumnIsOneEntryThatEveryTabularFormatShows) {
  const ResultSet set = measured();
  for (const ResultColumn& c : result_columns()) {
    SCOPED_TRACE(c.key);
    TableOptions options;
    options.columns = {c.key};
    const std::string table = format_tables(set, TableStyle::terminal, false, options);
    const std::string md = format_tables(set, TableStyle::markdown, false, options);
    const std::string tex = format_latex(set, {c.key});
    // measured.json has training and inference blocks, no graph: every other column applies somewhere.
    if (!column_applies(c, ColumnNeeds::measured | ColumnNeeds::train)) continue;
    EXPECT_NE(table.find(c.header_train), std::string::npos) << table;
    EXPECT_NE(md.find(c.header_train), std::string::npos) << md;
    EXPECT_NE(tex.find(c.latex_unit), std::string::npos) << tex;
    // The note under the table explains this column, and no column that is not shown.
    if (std::string(c.note).empty()) continue;
    const std::string note = column_notes({c.key}, NoteContext{true, false});
    EXPECT_NE(table.find(note.substr(0, 12)), std::string::npos) << table;
    for (const ResultColumn& other : result_columns()) {
      if (std::string(other.note) == c.note || std::string(other.note).empty()) continue;
      EXPECT_EQ(table.find(std::string(other.note).substr(0, 14)), std::string::npos) << other.key << "\n" << table;
    }
  }
  // One set of names: what --columns refuses, --latex-columns refuses too.
  EXPECT_THROW(check_result_columns({"time"}), std::invalid_argument);
  EXPECT_THROW(format_latex(set, {"gmac"}), std::invalid_argument);
}

// The header cells of a terminal table's header line: cells are set apart by two spaces or more.
std::vector<std::string> header_cells(const std::string& line) {
  std::vector<std::string> cells;
  const std::regex gap(" {2,}");
  for (std::sregex_token_iterator it(line.begin(), line.end(), gap, -1), end; it != end; ++it)
    if (!it->str().empty()) cells.push_back(*it);
  return cells;
}

// --wide is every column of the catalogue that applies: a table of rows that have every quantity
// (measured training rows, a recorded graph) shows every column, as many times as the catalogue
// has it (step ms is both step_ms and time_ms), in the terminal, Markdown and HTML tables alike.
TEST(ReportFormats, WideShowsEveryColumnOfTheCatalogue) {
  ResultSet set;
  set.rows = {round_row("base", 1000.0), round_row("other", 500.0)};
  set.rows[0].is_baseline = true;
  for (ResultRow& r : set.rows) r.graph = r.step;
  std::vector<std::string> expected = {"variant"};
  for (const ResultColumn& c : result_columns()) {
    ASSERT_TRUE(column_applies(c, table_has(true, true, true))) << c.key;
    expected.emplace_back(c.header_train);
  }
  TableOptions wide;
  wide.wide = true;
  const std::string terminal = format_tables(set, TableStyle::terminal, false, wide);
  std::istringstream lines(terminal);
  std::string title, header;
  std::getline(lines, title);
  std::getline(lines, header);
  EXPECT_EQ(header_cells(header), expected) << terminal;
  // Markdown is wide by default; its header row lists the same cells between pipes.
  const std::string md = format_tables(set, TableStyle::markdown);
  std::string md_header = "|";
  for (const std::string& h : expected) md_header += " " + h + " |";
  EXPECT_NE(md.find(md_header + "\n"), std::string::npos) << md_header << "\n" << md;
  EXPECT_EQ(block_tables(set).front().table.header, expected);
}

// A default set is a query on the catalogue: each of its columns says its place, once, and the
// places count 1, 2, 3, ... (two columns in one place would leave their order to chance).
TEST(ReportFormats, EveryDefaultSetHasEachPlaceOnce) {
  for (const ColumnSet set : {ColumnSet::compact, ColumnSet::compact_network, ColumnSet::compact_analysis,
                              ColumnSet::latex, ColumnSet::latex_analysis, ColumnSet::latex_sweep}) {
    SCOPED_TRACE(static_cast<int>(set));
    std::vector<int> places;
    for (const ResultColumn& c : result_columns()) {
      size_t in_set = 0;
      for (const SetPlace& p : c.sets)
        if (p.set == set) {
          places.push_back(p.order);
          ++in_set;
        }
      EXPECT_LE(in_set, 1u) << c.key;
    }
    std::sort(places.begin(), places.end());
    ASSERT_FALSE(places.empty());
    for (size_t i = 0; i < places.size(); ++i) EXPECT_EQ(places[i], static_cast<int>(i) + 1);
    EXPECT_EQ(column_set(set).size(), places.size());
  }
}

TEST(ReportFormats, LatexFitsOneColumnOfAOneColumnArticle) {
  if (std::system("command -v pdflatex > /dev/null 2>&1") != 0) GTEST_SKIP() << "pdflatex is not installed";
  // A saved measurement (trainings and inferences, a sweep) and the seed block's analysis.
  const std::string log = compile_one_column(render_results(measured(), "latex"), "latex-measured");
  EXPECT_NE(log.find("Output written on doc.pdf"), std::string::npos) << log;
  EXPECT_EQ(log.find("Overfull"), std::string::npos) << log;
  const auto analysis = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --format latex");
  ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
  EXPECT_EQ(compile_one_column(analysis.out, "latex-analysis").find("Overfull"), std::string::npos);
}

// --latex-sweep-table: a whole sweep in one table per block (rows: point x variant), absolute
// columns beside the ratios, each ratio against the baseline at its own point; it compiles and fits
// one column. A caption speaks of ratios only when a ratio column is shown.
TEST(ReportFormats, LatexPutsAWholeSweepInOneTable) {
  const ResultSet set = measured();  // two blocks, each swept over batch = 1, 2
  const std::string one = format_latex(set, {}, LatexGrouping::per_block);
  size_t tables = 0;
  for (size_t at = one.find("\\begin{table}"); at != std::string::npos; at = one.find("\\begin{table}", at + 1))
    ++tables;
  EXPECT_EQ(tables, 2u) << one;
  EXPECT_NE(one.find("conv\\_2d, swept over batch (a group of rows per point)"), std::string::npos) << one;
  EXPECT_NE(one.find("batch & Variant & Params & "), std::string::npos) << one;
  EXPECT_NE(one.find("at the same point."), std::string::npos) << one;
  // The point's value once, on its first row; a rule between points; ratios per point.
  EXPECT_NE(one.find("\n1 & standard (base) & "), std::string::npos) << one;
  EXPECT_NE(one.find("\\midrule\n2 & standard (base) & "), std::string::npos) << one;
  EXPECT_NE(one.find("\n & bottleneck"), std::string::npos) << one;
  for (const std::string& line : {std::string("\n1 & standard (base) & "), std::string("\n2 & standard (base) & ")}) {
    const size_t at = one.find(line);
    ASSERT_NE(at, std::string::npos);
    const std::string row = one.substr(at, one.find('\n', at + 1) - at);
    EXPECT_NE(row.find("& 1.00 &"), std::string::npos) << row;  // the baseline's own ratio at each point
  }
  // Without a ratio column the caption does not speak of ratios.
  const std::string absolute = format_latex(set, {"params", "time_ms"}, LatexGrouping::per_block);
  EXPECT_EQ(absolute.find("Ratios"), std::string::npos) << absolute;
  EXPECT_NE(format_latex(set, {"params", "time_x"}).find("Ratios ($\\times$) are against the baseline"),
            std::string::npos);
  // The command line's flag gives the same tables.
  const auto r = run_cli("report " + source_path(kMeasured) + " --format latex --latex-sweep-table");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, one);
  if (std::system("command -v pdflatex > /dev/null 2>&1") != 0) GTEST_SKIP() << "pdflatex is not installed";
  const std::string log = compile_one_column(one, "latex-sweep");
  EXPECT_NE(log.find("Output written on doc.pdf"), std::string::npos) << log;
  EXPECT_EQ(log.find("Overfull"), std::string::npos) << log;
}

TEST(ReportFormats, LatexOfTheSeedBlockMeasuredFitsOneColumn) {
  if (std::system("command -v pdflatex > /dev/null 2>&1") != 0) GTEST_SKIP() << "pdflatex is not installed";
  // The seed block measured for real (a short budget: the widths are under test, not the times).
  const auto r = run_cli("compare " + source_path("configs/seed-blocks.yaml") +
                         " --device cpu --min-time 0 --min-samples 2 --timeout 0.2 -q --format latex");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bottleneck"), std::string::npos);
  const std::string log = compile_one_column(r.out, "latex-seed");
  EXPECT_NE(log.find("Output written on doc.pdf"), std::string::npos) << log;
  EXPECT_EQ(log.find("Overfull"), std::string::npos) << log;
}

TEST(ReportFormats, Escaping) {
  EXPECT_EQ(latex_escape("a_b&c%d$e#f{g}h~i^j\\k"),
            "a\\_b\\&c\\%d\\$e\\#f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j\\textbackslash{}k");
  EXPECT_EQ(html_escape("<a href=\"x\">Tom & Jerry's</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
}

TEST(ReportFormats, NumberFormatting) {
  EXPECT_EQ(format_significant(0.00123456, 3), "0.00123");
  EXPECT_EQ(format_significant(1.23456, 3), "1.23");
  EXPECT_EQ(format_significant(123.456, 3), "123");
  EXPECT_EQ(format_significant(12345.6, 3), "12346");
  EXPECT_EQ(format_significant(0, 3), "0");
  EXPECT_EQ(log_tick_label(0.01), "0.01");
  EXPECT_EQ(log_tick_label(5), "5");
  EXPECT_EQ(log_tick_label(100), "100");
  EXPECT_EQ(log_tick_label(1000), "1 k");
  EXPECT_EQ(log_tick_label(2e10), "20 G");
  EXPECT_EQ(log_tick_label(1e12), "1 T");
  EXPECT_EQ(log_tick_label(1e-5), "1e-5");
}

TEST(ReportFormats, PeerFilesWithNullsLoad) {
  // scripts/torch_peer.py writes null where it measured nothing; a row that failed before its
  // counts has null counts.
  const json doc = {{"schema", "convbench.results/1"},
                    {"engine", "pytorch 1.13"},
                    {"device", "cpu"},
                    {"provenance", {{"device_name", "cpu"}}},
                    {"results",
                     {{{"block", "b"},
                       {"variant", "v"},
                       {"params", nullptr},
                       {"macs", nullptr},
                       {"memory", nullptr},
                       {"time_ms", nullptr},
                       {"output_shape", nullptr},
                       {"status", "error"},
                       {"message", "boom"}},
                      {{"block", "b"},
                       {"variant", "w"},
                       {"params", 5},
                       {"mode", "infer"},
                       {"memory", {{"saved_bytes", 0}, {"saved_bytes_including_input", 64}}},
                       {"time_ms",
                        {{"forward",
                          {{"median", 1.5},
                           {"q1", 1.0},
                           {"q3", 2.0},
                           {"rel_stdev", nullptr},
                           {"stop", "converged"},
                           {"raw_ms", {1.0, 1.5, 2.0}}}},
                         {"backward", nullptr},
                         {"step", nullptr}}},
                       {"status", "ok"},
                       {"device", "cpu"}}}}};
  const ResultSet set = results_from_json(doc, "peer.json");
  ASSERT_EQ(set.rows.size(), 2u);
  EXPECT_EQ(set.rows[0].status, RunStatus::error);
  EXPECT_EQ(set.rows[0].params, 0);
  EXPECT_FALSE(set.rows[0].measured);
  ASSERT_TRUE(set.rows[1].forward);
  EXPECT_EQ(set.rows[1].forward->median, 1.5);
  EXPECT_TRUE(set.rows[1].forward->noise_met);
  EXPECT_EQ(set.rows[1].forward->samples(), 3);
  EXPECT_FALSE(set.rows[1].backward);
  ASSERT_TRUE(set.rows[1].measured);
  EXPECT_EQ(set.rows[1].measured->peak_bytes, -1);  // not measured on CPU
  EXPECT_FALSE(has_measured_peak(set.rows[1]));
  // A wrong type is still an error with the row's path.
  json bad = doc;
  bad["results"][1]["params"] = "five";
  try {
    results_from_json(bad, "peer.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "peer.json: results[1].params: expected an integer in [0, 9223372036854775807], got "
              "the string \"five\"");
  }
}

}  // namespace
}  // namespace convbench

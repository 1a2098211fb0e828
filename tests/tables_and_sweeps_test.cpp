// The tables a reader sees (compact by default, --wide, --columns, --format) and sweeps as data
// (--sweep, --filter, swept fields as columns, throughput), end to end through the CLI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_harness.hpp"
#include "results/results.hpp"

namespace convbench {
namespace {

using testing::run_cli;
using testing::source_path;

// Columns a line takes on a terminal: its code points (the tables' ± and → are one column each).
size_t terminal_columns(const std::string& line) {
  size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

// The lines of the tables, up to the footnote (prose that may be long: the paragraph after the
// last blank line).
std::vector<std::string> table_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  while (!lines.empty() && !lines.back().empty()) lines.pop_back();
  return lines;
}

TEST(Tables, TheDefaultCompareTableOfTheSeedFitsOneHundredColumns) {
  // A short timing budget: the widths, not the times, are under test.
  const auto r = run_cli("compare " + source_path("configs/seed-blocks.yaml") +
                         " --device cpu --min-time 0 --min-samples 2 --timeout 0.2 -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = table_lines(r.out);
  ASSERT_GE(lines.size(), 5u) << r.out;
  for (const std::string& line : lines) EXPECT_LE(terminal_columns(line), 100u) << line;
  EXPECT_NE(lines[1].find("step x"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("samples/s"), std::string::npos) << lines[1];
  // Under the table, what each variant builds, the bottleneck's stages by their module names.
  EXPECT_NE(r.out.find("\nstandard = conv 3x3x3 16→32, batch_norm, relu\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nbottleneck = reduce: conv 1x1x1 16→16, batch_norm, relu; spatial: conv 3x3x3 16→16"),
            std::string::npos)
      << r.out;
  // --wide shows every column that applies, --columns exactly the ones named.
  const auto wide = run_cli("report " + source_path("tests/data/results/measured.json") + " --wide");
  EXPECT_NE(wide.out.find("TFLOP/s"), std::string::npos) << wide.out;
  EXPECT_NE(wide.out.find("peak pred."), std::string::npos);
  const auto chosen =
      run_cli("report " + source_path("tests/data/results/measured.json") + " --columns samples_per_s,time_x");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(table_lines(chosen.out).at(1), "variant          batch  samples/s  step x");
}

TEST(Tables, TheDefaultAnalysisTableOfTheSeedFitsOneHundredColumns) {
  const auto r = run_cli("analyze " + source_path("configs/seed-blocks.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = table_lines(r.out);
  ASSERT_GE(lines.size(), 5u) << r.out;
  for (const std::string& line : lines) EXPECT_LE(terminal_columns(line), 100u) << line;
  // The wide analysis table is the one that may be wider; the compact one keeps the ratios.
  EXPECT_NE(lines[1].find("peak x"), std::string::npos) << lines[1];
}

TEST(Tables, UnknownColumnsAreABadInput) {
  const auto r = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --columns params,speed");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--columns: unknown column \"speed\" (columns: params, "), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Tables, FormatChoosesWhatStandardOutputShows) {
  const auto md = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.rfind("### vnet-block", 0), 0u) << md.out;
  const auto csv = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --format csv");
  EXPECT_EQ(csv.out.rfind("block,variant,kind,point,", 0), 0u) << csv.out;
  EXPECT_EQ(run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --format pdf").exit_code, 2);
  // Standard output carries one format: --format md with --csv - would drop one of them.
  const auto both = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --format md --csv -");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_TRUE(both.out.empty()) << both.out;
  EXPECT_NE(both.err.find("--format: --format md and --csv - both ask for standard output"), std::string::npos)
      << both.err;
  EXPECT_EQ(run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --csv -").exit_code, 0);
}

TEST(Sweeps, OneTablePerBlockWithTheSweptFieldAsAColumn) {
  const auto r = run_cli("analyze " + source_path("tests/data/results/readme-spec.yaml") + " --sweep batch=1,2,4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = table_lines(r.out);
  // One title, one header, one rule, 3 variants x 3 points, what each variant builds (5 lines:
  // bottleneck and separable wrap at 100 columns), a blank line.
  ASSERT_EQ(lines.size(), 2u + 1 + 9 + 5 + 1) << r.out;
  EXPECT_EQ(lines[0], "vnet-block: input {1,2,4}x16x16x16x16, sweeping batch, float32, channels_first, train");
  EXPECT_EQ(lines[1].rfind("variant          batch  params", 0), 0u) << lines[1];
  EXPECT_EQ(lines[9].rfind("standard (base)      4", 0), 0u) << lines[9];
  // Ratios are against the baseline at the same point: every standard row is 1.00x.
  // (FLOP x and peak x end the compact analysis row.)
  for (size_t i : {3u, 6u, 9u}) {
    const std::string tail = "1.00x   1.00x";
    EXPECT_EQ(lines[i].substr(lines[i].size() - tail.size()), tail) << lines[i];
  }
  // The CSV carries the swept value as a number, and the block's fields.
  const auto csv =
      run_cli("analyze " + source_path("tests/data/results/readme-spec.yaml") + " --sweep batch=1,2,4 --format csv");
  std::istringstream rows(csv.out);
  std::string header, first;
  std::getline(rows, header);
  std::getline(rows, first);
  EXPECT_NE(
      header.find(
          ",batch,in_channels,out_channels,in_depth,in_height,in_width,kernel_depth,kernel_height,"
          "kernel_width,samples_per_s,layout_conversion,memory_policy,flops_recompute,buffer_counters,sweep_batch"),
      std::string::npos)
      << header;
  EXPECT_NE(first.find(",1,16,32,16,16,16,3,3,3,,none,none,0,1,1"), std::string::npos) << first;
}

TEST(Sweeps, ASweptTableOfTheSeedFitsOneHundredColumnsTitleIncluded) {
  // Memory only: a measured table's columns and title (with its device), quickly.
  const auto r = run_cli("compare " + source_path("configs/seed-blocks.yaml") +
                         " --device cpu --memory-only -q --sweep batch=2,16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = table_lines(r.out);
  ASSERT_EQ(lines.size(), 2u + 1 + 6 + 5 + 1) << r.out;  // and what each variant builds
  for (const std::string& line : lines) EXPECT_LE(terminal_columns(line), 100u) << line;
  EXPECT_EQ(lines[0],
            "vnet-block: input {2,16}x16x32x32x32, sweeping batch, float32, channels_first, train, device cpu");
}

TEST(Sweeps, ATitleNamesEveryValueOfASweptDtypeAndATablePerMode) {
  const auto r = run_cli("analyze " + source_path("configs/seed-blocks.yaml") +
                         " --sweep dtype=float32,float16 --sweep mode=train,infer");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Train and infer rows have different columns (step vs forward, backward FLOPs): a table each.
  const size_t train = r.out.find(
      "vnet-block: input 6x16x32x32x32, sweeping dtype, mode, {float32,float16}, "
      "channels_first, train\n");
  const size_t infer = r.out.find(
      "vnet-block: input 6x16x32x32x32, sweeping dtype, mode, {float32,float16}, "
      "channels_first, infer\n");
  ASSERT_NE(train, std::string::npos) << r.out;
  ASSERT_NE(infer, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GFLOP bwd", infer), std::string::npos) << "an inference table has no backward column";
  ASSERT_LT(train, infer);
  EXPECT_EQ(r.out.substr(train, infer - train).find("  infer  "), std::string::npos)
      << "no infer row in the train table";
}

TEST(Sweeps, CommandLineSweepsAreCheckedLikeTheSpecs) {
  const std::string spec = source_path("tests/data/results/readme-spec.yaml");
  const auto bad_value = run_cli("analyze " + spec + " --sweep batch=1,x");
  EXPECT_EQ(bad_value.exit_code, 2);
  EXPECT_NE(bad_value.err.find("sweep.batch[1]: expected an integer, got the string \"x\""), std::string::npos)
      << bad_value.err;
  const auto bad_field = run_cli("analyze " + spec + " --sweep colour=1");
  EXPECT_EQ(bad_field.exit_code, 2);
  EXPECT_NE(bad_field.err.find("--sweep: \"colour\" is not a block field that can be swept"), std::string::npos);
  for (const char* no_values : {" --sweep batch", " --sweep batch="}) {
    const auto r = run_cli("analyze " + spec + no_values);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--sweep: expected FIELD=V1,V2,... (e.g. batch=1,2,4), got no values for \"batch\""),
              std::string::npos)
        << r.err;
  }
  const auto no_field = run_cli("analyze " + spec + " --sweep =1,2");
  EXPECT_EQ(no_field.exit_code, 2);
  EXPECT_NE(no_field.err.find("got no field before \"=1,2\""), std::string::npos) << no_field.err;
  const auto zero = run_cli("analyze " + spec + " --sweep batch=0");
  EXPECT_EQ(zero.exit_code, 2) << zero.out;
  // Two fields: the cartesian product, the first given varying slowest.
  const auto two = run_cli("analyze " + spec + " --sweep batch=1,2 --sweep size=8,16 --format csv");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("\"batch=2,size=8\""), std::string::npos) << two.out;
  EXPECT_LT(two.out.find("\"batch=1,size=16\""), two.out.find("\"batch=2,size=8\""));
}

// A value given twice in one sweep (batch=1,1,1) would run the same point again under the same
// label: refused at the repeat, on the command line and in the file alike.
TEST(Sweeps, AValueSweptTwiceIsABadInput) {
  const std::string json = testing::temp_path("value_twice.json");
  const auto r =
      run_cli("analyze " + source_path("tests/data/results/readme-spec.yaml") + " --sweep batch=1,1,1 --json " + json);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("sweep.batch[1]: the value 1 is swept twice (values 1 and 2 of batch)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(json)) << "no output is written on bad input";
  const std::string spec = testing::temp_path("value_twice.yaml");
  std::ofstream(spec) << testing::read_file(source_path("tests/data/results/readme-spec.yaml"))
                      << "sweep:\n  layout: [channels_last, channels_first, channels_last]\n";
  const auto f = run_cli("analyze " + spec);
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_NE(f.err.find("value_twice.yaml:"), std::string::npos) << f.err;
  EXPECT_NE(f.err.find("the value \"channels_last\" is swept twice (values 1 and 3 of layout)"), std::string::npos)
      << f.err;
}

TEST(Sweeps, AFieldSweptTwiceOnTheCommandLineIsABadInput) {
  // The last --sweep of a field silently winning would run a sweep nobody asked for.
  const std::string json = testing::temp_path("swept_twice.json");
  const auto r = run_cli("analyze " + source_path("tests/data/results/readme-spec.yaml") +
                         " --sweep batch=1,2 --sweep batch=4 --json " + json);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--sweep: \"batch\" is swept twice"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(json)) << "no output is written on bad input";
  // Two different fields are a product, not a conflict.
  EXPECT_EQ(
      run_cli("analyze " + source_path("tests/data/results/readme-spec.yaml") + " --sweep batch=1,2 --sweep size=8")
          .exit_code,
      0);
}

TEST(Sweeps, CompareTakesSweepAndFilterFromTheCommandLine) {
  // Memory only: the wiring of the flags into compare is under test, not the times.
  const std::string json = testing::temp_path("compare_sweep.json");
  const auto r =
      run_cli("compare " + source_path("tests/data/results/readme-spec.yaml") +
              " --device cpu --memory-only -q --sweep batch=1,2 --filter separable --format csv --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::filesystem::remove(json);
  std::istringstream rows(r.out);
  std::string header, line;
  std::getline(rows, header);
  EXPECT_NE(header.find(",sweep_batch"), std::string::npos) << header;
  std::vector<std::string> kept;
  while (std::getline(rows, line)) kept.push_back(line.substr(0, line.find(",", line.find(",") + 1)));
  EXPECT_EQ(kept, (std::vector<std::string>{"vnet-block,standard", "vnet-block,separable", "vnet-block,standard",
                                            "vnet-block,separable"}))
      << r.out;
  // Bad values are refused before anything runs, naming the flag, and nothing is written.
  const auto bad = run_cli("compare " + source_path("tests/data/results/readme-spec.yaml") +
                           " --device cpu --memory-only -q --sweep batch=1,-2 --json " + json);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_EQ(bad.err.rfind("error: --sweep:", 0), 0u) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(json));
  const auto none = run_cli("compare " + source_path("tests/data/results/readme-spec.yaml") +
                            " --device cpu --memory-only -q --filter nothing-here --json " + json);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--filter: \"nothing-here\" matches no block/variant"), std::string::npos) << none.err;
  EXPECT_FALSE(std::filesystem::exists(json));
}

TEST(Sweeps, AFilterThatMatchesNothingListsEveryNameWhole) {
  // "b/sep" must be listed although "b/separable" contains it.
  const std::string spec = testing::temp_path("filter_names.yaml");
  std::ofstream(spec) << "blocks:\n  - {name: b, dims: 2, batch: 1, in_channels: 4, out_channels: 4, size: 8,\n"
                         "     variants: [standard, separable, {kind: separable, name: sep}]}\n";
  const auto r = run_cli("analyze " + spec + " --filter zzz");
  std::filesystem::remove(spec);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("(b/standard, b/separable, b/sep)"), std::string::npos) << r.err;
}

TEST(Sweeps, FilterRunsTheMatchingVariantsAndKeepsTheBaseline) {
  const std::string spec = source_path("tests/data/results/readme-spec.yaml");
  const auto r = run_cli("analyze " + spec + " --filter 'sep' --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nvnet-block,separable,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nvnet-block,standard,"), std::string::npos) << "the baseline stays";
  EXPECT_EQ(r.out.find("bottleneck"), std::string::npos) << r.out;
  const auto none = run_cli("analyze " + spec + " --filter 'resnet'");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--filter: \"resnet\" matches no block/variant of the spec (vnet-block/standard, "),
            std::string::npos)
      << none.err;
  EXPECT_EQ(run_cli("analyze " + spec + " --filter '('").exit_code, 2);
}

// A folded variant is built from its source: a filter that keeps it keeps its source too.
TEST(Sweeps, FilterKeepsAFoldedVariantsSource) {
  const std::string spec = source_path("configs/subtracted-conv.yaml");
  const auto r = run_cli("analyze " + spec + " --filter 'subtracted-56/online' --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nsubtracted-56,online-subtracted,folded,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nsubtracted-56,subtracted,custom,"), std::string::npos) << "the source stays";
  EXPECT_NE(r.out.find("\nsubtracted-56,standard,"), std::string::npos) << "the baseline stays";
  EXPECT_EQ(r.out.find("subtracted-56-infer"), std::string::npos) << r.out;
}

// Shapes in rows are logical in every layout: a channels-last row's channels are its second dim
// (the CSV once wrote a channels-last block's width as its in_channels).
TEST(Tables, ChannelsAndSpatialDimsOfAChannelsLastRow) {
  ResultRow r;
  r.layout = "channels_last";
  r.input_shape = {8, 32, 24, 28};
  EXPECT_EQ(channels_of(r, r.input_shape), 32);
  EXPECT_EQ(spatial_of(r, r.input_shape), (std::vector<int64_t>{24, 28}));
  const auto csv = run_cli("analyze " + source_path("tests/data/results/readme-spec.yaml") +
                           " --sweep layout=channels_last --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::istringstream rows(csv.out);
  std::string header, first;
  std::getline(rows, header);
  std::getline(rows, first);
  auto column = [&](const std::string& name) {
    std::vector<std::string> h, v;
    std::string cell;
    for (std::istringstream hs(header); std::getline(hs, cell, ',');) h.push_back(cell);
    for (std::istringstream vs(first); std::getline(vs, cell, ',');) v.push_back(cell);
    for (size_t i = 0; i < h.size() && i < v.size(); ++i)
      if (h[i] == name) return v[i];
    return std::string("?");
  };
  EXPECT_EQ(column("layout"), "channels_last");
  EXPECT_EQ(column("in_channels"), "16");
  EXPECT_EQ(column("out_channels"), "32");  // the old reading gave the output width, 16
}

}  // namespace
}  // namespace convbench

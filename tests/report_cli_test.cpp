// The output flags of `compare` and `analyze` and `report` end to end: `report` reproduces what
// `compare` printed, and every file a run writes equals `report --format` of its JSON (all
// formats come from one ResultSet). The run is timed, but only equality is asserted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.hpp"

namespace convbench {
namespace {

using testing::read_file;
using testing::run_cli;
using testing::temp_path;

const char* kTinySpec =
    "blocks:\n"
    "  - name: tiny\n"
    "    batch: 1\n"
    "    in_channels: 4\n"
    "    out_channels: 8\n"
    "    size: 8\n"
    "    variants: [standard, {kind: bottleneck, ratio: 2}]\n";

TEST(ReportCli, CompareFilesAndReportAgree) {
  const std::string spec = temp_path("tiny.yaml");
  std::ofstream(spec) << kTinySpec;
  const std::pair<const char*, const char*> outputs[] = {{"--json", "json"},   {"--csv", "csv"},
                                                         {"--markdown", "md"}, {"--latex", "latex"},
                                                         {"--html", "html"},   {"--gbench-json", "gbench-json"}};
  std::string flags;
  for (const auto& [flag, format] : outputs)
    flags += std::string(" ") + flag + " " + temp_path(std::string("out.") + format);
  const auto run = run_cli("compare " + spec +
                           " --device reference --min-time 0 --min-samples 3 --max-noise 1000 --timeout 2 -q" + flags);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string json = temp_path("out.json");
  const auto table = run_cli("report " + json);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out, run.out);  // report reproduces what compare printed
  // The note under the table explains the columns shown, and only those: the compact table has
  // samples/s but no achieved rates; --wide has both.
  EXPECT_NE(run.out.find("samples/s: the batch over"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("TFLOP/s"), std::string::npos) << run.out;
  const auto wide = run_cli("report " + json + " --wide");
  EXPECT_NE(wide.out.find("TFLOP/s, GB/s: achieved rates"), std::string::npos) << wide.out;
  for (const auto& [flag, format] : outputs) {
    SCOPED_TRACE(format);
    const auto r = run_cli("report " + json + " --format " + format);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, read_file(temp_path(std::string("out.") + format)));
  }
  for (const auto& [flag, format] : outputs) std::filesystem::remove(temp_path(std::string("out.") + format));
  std::filesystem::remove(spec);
}

TEST(ReportCli, AnalyzeWritesEveryFormatOrNone) {
  const std::string spec = temp_path("tiny_a.yaml");
  std::ofstream(spec) << kTinySpec;
  const std::string html = temp_path("a.html"), latex = temp_path("a.tex"), gbench = temp_path("a.gbench.json");
  const auto ok = run_cli("analyze " + spec + " --html " + html + " --latex " + latex + " --gbench-json " + gbench);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(read_file(html).find("memory-breakdown-0"), std::string::npos);
  EXPECT_NE(read_file(latex).find("\\toprule"), std::string::npos);
  EXPECT_NE(read_file(gbench).find("\"benchmarks\": []"), std::string::npos);
  for (const auto& f : {html, latex, gbench}) std::filesystem::remove(f);
  // One unwritable output: exit 2, and none of the others is written.
  const auto bad = run_cli("analyze " + spec + " --html " + html + " --latex /nonexistent/dir/a.tex");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("/nonexistent/dir/a.tex"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(latex));
  std::filesystem::remove(spec);
  std::filesystem::remove(html);
}

TEST(ReportCli, ReportWritesToAFileAndRejectsUnknownFormats) {
  const std::string out = temp_path("report.tex");
  const auto r = run_cli("report " + ::convbench::testing::source_path("tests/data/results/measured.json") +
                         " --format latex -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(read_file(out).find("\\bottomrule"), std::string::npos);
  std::filesystem::remove(out);
  EXPECT_EQ(run_cli("report " + ::convbench::testing::source_path("tests/data/results/measured.json") + " --format pdf")
                .exit_code,
            2);
}

}  // namespace
}  // namespace convbench

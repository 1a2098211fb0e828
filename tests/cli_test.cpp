// The convbench command line end to end: golden outputs, JSON fields, and every class of bad
// input (exit code 2, a message with file:line:column and key path, no output file written).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "shipped_configs.hpp"
#include "spec/block_kind_registry.hpp"

namespace convbench {
namespace {

using testing::read_file;
using testing::run_cli;
using testing::source_path;
using testing::temp_path;

TEST(Cli, AnalyzeSeedBlockMatchesGoldenTable) {
  const auto r = run_cli("analyze " + source_path("configs/seed-blocks.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(source_path("tests/golden/analyze_seed.txt")));
}

TEST(Cli, AnalyzeWritesJsonCsvAndMarkdown) {
  const std::string json = temp_path("a.json"), csv = temp_path("a.csv"), md = temp_path("a.md");
  const auto r = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --json " + json + " --csv " + csv +
                         " --markdown " + md);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(doc["schema"], "convbench.results/1");
  ASSERT_EQ(doc["results"].size(), 3u);
  const auto& standard = doc["results"][0];
  EXPECT_EQ(standard["block"], "vnet-block");
  EXPECT_EQ(standard["variant"], "standard");
  EXPECT_EQ(standard["kind"], "standard");
  EXPECT_TRUE(standard["point"].is_object());
  EXPECT_EQ(standard["params"], 13920);
  EXPECT_EQ(standard["buffers"], 64);
  EXPECT_EQ(standard["macs"]["forward"], 2717908992LL);
  EXPECT_EQ(standard["macs"]["backward_data"], 0);
  EXPECT_EQ(standard["macs"]["backward_weight"], 2717908992LL);
  EXPECT_EQ(standard["flops"]["forward"].get<int64_t>(), 2 * 2717908992LL + 7 * 6LL * 32 * 32768);
  EXPECT_GT(standard["memory"]["predicted_peak_bytes"].get<int64_t>(), 0);
  EXPECT_TRUE(standard["memory"]["predicted"]["at_peak"].contains("saved"));
  EXPECT_EQ(doc["results"][1]["params"], 7872);
  EXPECT_EQ(doc["results"][2]["macs"]["forward"], 185597952);
  EXPECT_EQ(doc["provenance"]["spec_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(read_file(csv), read_file(source_path("tests/golden/analyze_seed.csv")));
  EXPECT_EQ(read_file(md), read_file(source_path("tests/golden/analyze_seed.md")));
  for (const auto& f : {json, csv, md}) std::filesystem::remove(f);
}

TEST(Cli, ReportRegeneratesTheTableFromJson) {
  const std::string json = temp_path("r.json");
  const auto a = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --json " + json);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto table = run_cli("report " + json);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out, a.out);
  const auto csv = run_cli("report " + json + " --format csv");
  EXPECT_EQ(csv.out, read_file(source_path("tests/golden/analyze_seed.csv")));
  std::filesystem::remove(json);
}

TEST(Cli, EveryConfigValidates) {
  for (const std::string& config : shipped_configs()) {
    const auto r = run_cli("validate " + config);
    EXPECT_EQ(r.exit_code, 0) << config << ": " << r.err;
  }
}

TEST(Cli, ListVersionAndHelp) {
  const auto list = run_cli("list");
  EXPECT_EQ(list.exit_code, 0);
  for (const BlockKindDefinition* kind : block_kinds())
    EXPECT_NE(list.out.find(kind->ops_doc), std::string::npos) << kind->name;
  const auto version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("convbench 0.1.0"), std::string::npos);
  EXPECT_NE(version.out.find("backends: reference, cpu"), std::string::npos);
  EXPECT_EQ(run_cli("analyze --help").exit_code, 0);
  EXPECT_EQ(run_cli("analyze").exit_code, 2);     // missing SPEC
  EXPECT_EQ(run_cli("frobnicate").exit_code, 2);  // unknown subcommand
}

struct BadInput {
  const char* name;
  const char* file_name;
  std::string text;
  std::string expected;  // the message after "error: <path>"
};

const char* kBase =
    "blocks:\n"
    "  - name: b\n"
    "    batch: 2\n"
    "    in_channels: 8\n"
    "    out_channels: 16\n"
    "    size: [8, 8]\n"
    "    variants: [standard]\n";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

std::vector<BadInput> bad_inputs() {
  const std::string base = kBase;
  return {
      {"unknown key", "s.yaml", replace(base, "in_channels", "in_channel"),
       ":4:5: blocks[0].in_channel: unknown key \"in_channel\" (did you mean \"in_channels\"?)"},
      {"unknown variant key", "s.yaml", replace(base, "[standard]", "[standard, {kind: bottleneck, ratoi: 2}]"),
       ":7:45: blocks[0].variants[1].ratoi: unknown key \"ratoi\" for a bottleneck variant (did you mean \"ratio\"?)"},
      {"wrong type", "s.yaml", replace(base, "batch: 2", "batch: two"),
       ":3:12: blocks[0].batch: expected an integer, got the string \"two\""},
      {"missing field", "s.yaml", replace(base, "    in_channels: 8\n", ""),
       ":2:5: blocks[0].in_channels: missing required field \"in_channels\""},
      {"groups", "s.yaml", replace(base, "[standard]", "[standard, {kind: grouped, groups: 3}]"),
       ":7:50: blocks[0].variants[1].groups: in_channels 8 is not divisible by groups 3"},
      {"non-positive", "s.yaml", replace(base, "[8, 8]", "[8, 0]"),
       ":6:15: blocks[0].size[1]: must be positive, got 0"},
      {"kernel too large", "s.yaml", replace(base, "size: [8, 8]\n", "size: [8, 8]\n    kernel: 11\n    padding: 1\n"),
       ":7:13: blocks[0].kernel: kernel 11 spans 11 in dim 0, more than the padded input 10"},
      {"duplicate block", "s.yaml", base + base.substr(base.find('\n') + 1),
       ":8:11: blocks[1].name: duplicate block name \"b\""},
      {"empty blocks", "s.yaml", "blocks: []\n", ":1:9: blocks: the list of blocks is empty"},
      {"overflow", "s.yaml",
       replace(replace(base, "batch: 2", "batch: 2147483647"), "[8, 8]", "[2147483647, 2147483647]"),
       ":2:5: blocks[0]: the block's input tensor 2147483647x8x2147483647x2147483647 has more elements than int64"},
      {"malformed YAML", "s.yaml", "blocks: [\n  - name: b\n", ":2:3: invalid YAML: illegal block entry"},
      {"malformed JSON", "s.json", "{\"blocks\": [ {\"name\": \"b\",} ]}", ":1:27: invalid JSON: syntax error"},
      {"custom input", "s.yaml",
       replace(base, "[standard]", "[{kind: custom, ops: [{op: relu, name: r, inputs: [nope]}]}]"),
       ":7:66: blocks[0].variants[0].ops[0].inputs[0]: unknown value \"nope\""},
  };
}

TEST(Cli, BadInputExitsTwoWithALocatedMessageAndWritesNothing) {
  for (const BadInput& bad : bad_inputs()) {
    SCOPED_TRACE(bad.name);
    const std::string spec = temp_path(bad.file_name), json = temp_path("never.json");
    std::ofstream(spec) << bad.text;
    for (const char* command : {"analyze", "validate", "compare"}) {
      const auto r = run_cli(std::string(command) + " " + spec + " --json " + json);
      if (std::string(command) == "validate") {
        // validate takes no --json: a usage error is still exit 2
        const auto v = run_cli("validate " + spec);
        EXPECT_EQ(v.exit_code, 2);
        EXPECT_NE(v.err.find("error: " + spec + bad.expected), std::string::npos) << v.err;
        continue;
      }
      EXPECT_EQ(r.exit_code, 2) << command;
      EXPECT_NE(r.err.find("error: " + spec + bad.expected), std::string::npos) << command << ": " << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
      EXPECT_FALSE(std::filesystem::exists(json)) << command;
    }
    std::filesystem::remove(spec);
  }
}

TEST(Cli, MissingSpecFileAndBadResultsFile) {
  const auto r = run_cli("analyze /nonexistent/spec.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/spec.yaml: cannot open the spec file"), std::string::npos) << r.err;
  const std::string not_results = temp_path("not_results.json");
  std::ofstream(not_results) << "{\"schema\": \"something else\"}";
  const auto rep = run_cli("report " + not_results);
  EXPECT_EQ(rep.exit_code, 2);
  EXPECT_NE(rep.err.find("not a convbench results file"), std::string::npos) << rep.err;
  std::filesystem::remove(not_results);
}

}  // namespace
}  // namespace convbench

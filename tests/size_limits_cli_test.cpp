// A legal spec with a block no runtime can run at its size, beside an ordinary one
// (tests/data/specs/impossible-sizes.yaml): every command that predicts or measures on a backend
// (analyze --device, compare with and without --memory-only, explain, a shard) measures the
// ordinary rows and gives the impossible one a status whose message names the limit and the
// tensor, instead of dying inside oneDNN (issue 37: SIGFPE from the memory prediction, nothing
// written, a shard that crashed on every retry). The cpu refuses what oneDNN cannot count; the
// reference backend, which has no such limit, gets `oom` from the host's memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace convbench {
namespace {

using testing::read_file;
using testing::run_cli;
using testing::source_path;
using testing::temp_path;

const std::string kSpec = source_path("tests/data/specs/impossible-sizes.yaml");
// Three samples per phase, whatever their noise: the rows only need to be measured.
const char* kQuick = " --min-time 0 --min-samples 3 --max-noise 1000 --timeout 1 -q";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs `args` with --json into a fresh file and returns the parsed file; the command must succeed.
nlohmann::json run_json(const std::string& args, const std::string& name) {
  const std::string json = temp_path(name);
  std::filesystem::remove(json);
  const auto r = run_cli(args + " --json " + json);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  if (!std::filesystem::exists(json)) return nlohmann::json::object();
  nlohmann::json doc = nlohmann::json::parse(read_file(json));
  std::filesystem::remove(json);
  return doc;
}

// The rows of `ordinary` ran; the row of `huge` has `status` and a message with every part.
void expect_statuses(const nlohmann::json& rows, const std::string& status, const std::vector<std::string>& parts) {
  ASSERT_EQ(rows.size(), 3u) << rows.dump(1);
  int ordinary = 0;
  for (const auto& row : rows) {
    if (row["block"] == "ordinary") {
      EXPECT_EQ(row["status"], "ok") << row.dump(1);
      EXPECT_TRUE(row["memory"].contains("measured")) << row.dump(1);
      ++ordinary;
      continue;
    }
    EXPECT_EQ(row["block"], "huge");
    EXPECT_EQ(row["status"], status) << row.dump(1);
    const std::string message = row.value("message", "");
    for (const std::string& part : parts) EXPECT_TRUE(contains(message, part)) << part << " not in: " << message;
  }
  EXPECT_EQ(ordinary, 2);
}

const std::vector<std::string> kCpuReason = {"conv: its input 1024x1x262144x262144", "in oneDNN's blocked layout",
                                             "at most 2147483647 bytes"};

TEST(SizeLimitsCli, AnalyzeOnTheCpuPredictsEveryRowWithoutAskingOneDnnForTheImpossibleOne) {
  const nlohmann::json doc = run_json("analyze " + kSpec + " --device cpu", "analyze.json");
  ASSERT_EQ(doc["results"].size(), 3u);
  EXPECT_EQ(doc["provenance"]["predicted_workspace"], "cpu");
  // The impossible row keeps the prediction without a workspace: 256 TiB input and output, more.
  EXPECT_GT(doc["results"][2]["memory"]["predicted_peak_bytes"].get<int64_t>(), int64_t{1} << 49);
}

TEST(SizeLimitsCli, CompareOnTheCpuMeasuresTheOrdinaryRowsAndRefusesTheImpossibleOne) {
  expect_statuses(run_json("compare " + kSpec + " --device cpu" + kQuick, "compare.json")["results"], "unsupported",
                  kCpuReason);
}

TEST(SizeLimitsCli, MemoryOnlyOnTheCpuAndOnTheReference) {
  expect_statuses(run_json("compare " + kSpec + " --device cpu --memory-only -q", "cpu.json")["results"], "unsupported",
                  kCpuReason);
  // The reference backend computes with 64-bit indices: the host's memory is its limit.
  expect_statuses(run_json("compare " + kSpec + " --device reference --memory-only -q", "reference.json")["results"],
                  "oom", {"does not fit the host's memory", "not run"});
}

TEST(SizeLimitsCli, ExplainSaysWhyTheImpossibleRowDidNotRun) {
  const auto r = run_cli("explain " + kSpec + " --device cpu --peak-flops 1e11 --bandwidth 1e10" + kQuick);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "ordinary")) << r.out;
  EXPECT_TRUE(contains(r.out + r.err, "2147483647 bytes")) << r.out << r.err;
}

TEST(SizeLimitsCli, AShardRecordsTheImpossibleItemAsUnsupportedAndRunsTheRest) {
  const nlohmann::json doc = run_json("compare " + kSpec + " --device cpu --shard 0/1" + kQuick, "shard.json");
  ASSERT_TRUE(doc.contains("shard")) << doc.dump(1);
  int unsupported = 0, ok = 0;
  for (const auto& item : doc["shard"]["items"]) {
    unsupported += item["status"] == "unsupported" ? 1 : 0;
    ok += item["status"] == "ok" ? 1 : 0;
  }
  EXPECT_EQ(unsupported, 1) << doc["shard"]["items"].dump(1);
  EXPECT_EQ(ok, 2);
  expect_statuses(doc["results"], "unsupported", kCpuReason);
}

}  // namespace
}  // namespace convbench

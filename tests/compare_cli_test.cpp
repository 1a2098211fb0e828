// `convbench compare` end to end on the reference backend: measured rows with sane fields, memory
// measured equal to predicted, and a variant that cannot run reporting its status while the
// others complete.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace convbench {
namespace {

using testing::read_file;
using testing::run_cli;
using testing::temp_path;

const char* kSpec =
    "blocks:\n"
    "  - name: tiny\n"
    "    batch: 2\n"
    "    in_channels: 8\n"
    "    out_channels: 16\n"
    "    size: [6, 6]\n"
    "    variants: [standard, {kind: bottleneck, ratio: 2}, separable]\n"
    "  - name: tiny-infer\n"
    "    batch: 2\n"
    "    in_channels: 8\n"
    "    out_channels: 16\n"
    "    size: [4, 4, 4]\n"
    "    dims: 3\n"
    "    mode: infer\n"
    "    layout: channels_last\n"
    "    variants: [standard, {kind: grouped, groups: 4}]\n";

const char* kQuick = " --device reference --min-time 0 --min-samples 3 --timeout 2 -q";

nlohmann::json compare(const std::string& spec, const std::string& extra) {
  const std::string json = temp_path("compare.json");
  const auto r = run_cli("compare " + spec + kQuick + " --json " + json + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(read_file(json));
  std::filesystem::remove(json);
  return doc;
}

TEST(CompareCli, MeasuresEveryVariantWithSaneFields) {
  const std::string spec = temp_path("tiny.yaml");
  std::ofstream(spec) << kSpec;
  const nlohmann::json doc = compare(spec, "");
  EXPECT_EQ(doc["schema"], "convbench.results/1");
  EXPECT_EQ(doc["device"], "reference");
  EXPECT_EQ(doc["provenance"]["backend"], "reference");
  ASSERT_EQ(doc["results"].size(), 5u);
  for (const auto& row : doc["results"]) {
    SCOPED_TRACE(row["block"].get<std::string>() + "/" + row["variant"].get<std::string>());
    EXPECT_EQ(row["device"], "reference");
    EXPECT_EQ(row["status"], "ok") << row["message"];
    // The allocator's measured peak is exactly the model's prediction.
    EXPECT_EQ(row["memory"]["peak_bytes"], row["memory"]["predicted_peak_bytes"]);
    EXPECT_EQ(row["memory"]["measured"]["at_peak"], row["memory"]["predicted"]["at_peak"]);
    // The host's clock around the timing, where the machine reports one.
    if (doc["provenance"].contains("clock")) {
      EXPECT_EQ(row["clock"]["domain"], "cpu");
      EXPECT_GT(row["clock"]["before_mhz"].get<double>(), 0.0);
    }
    EXPECT_FALSE(row.contains("graph_message"));
    EXPECT_FALSE(row["time_ms"].contains("graph"));
    const bool train = row["mode"] == "train";
    for (const char* phase : {"forward", "backward", "step"}) {
      if (!train && std::string(phase) != "forward") {
        EXPECT_FALSE(row["time_ms"].contains(phase));
        continue;
      }
      const auto& t = row["time_ms"][phase];
      EXPECT_GT(t["median"].get<double>(), 0.0) << phase;
      EXPECT_LE(t["min"].get<double>(), t["q1"].get<double>());
      EXPECT_LE(t["q1"].get<double>(), t["median"].get<double>());
      EXPECT_LE(t["median"].get<double>(), t["q3"].get<double>());
      EXPECT_LE(t["q3"].get<double>(), t["max"].get<double>());
      EXPECT_GE(t["samples"].get<int>(), 3);
      EXPECT_EQ(t["raw_ms"].size(), t["samples"].get<size_t>());
    }
  }
  std::filesystem::remove(spec);
}

TEST(CompareCli, PerOpTimesCoverEveryOpAndPhase) {
  const std::string spec = temp_path("tiny.yaml");
  std::ofstream(spec) << kSpec;
  const nlohmann::json doc = compare(spec, " --per-op 2 --memory-only");
  // --memory-only skips all timing, per-op included.
  EXPECT_FALSE(doc["results"][0].contains("op_times"));
  const nlohmann::json timed = compare(spec, " --per-op 2");
  const auto& standard = timed["results"][0]["op_times"];
  for (const char* op : {"conv", "norm", "act"}) {
    ASSERT_TRUE(standard.contains(op)) << op;
    EXPECT_GT(standard[op]["forward_ms"].get<double>(), 0.0);
    EXPECT_GT(standard[op]["backward_ms"].get<double>(), 0.0);
  }
  const auto& infer = timed["results"][3]["op_times"];
  EXPECT_TRUE(infer["conv"].contains("forward_ms"));
  EXPECT_FALSE(infer["conv"].contains("backward_ms"));
  for (const auto& row : timed["results"])
    for (const auto& [op, t] : row["op_times"].items()) EXPECT_EQ(t["samples"].get<int>(), 2) << op;
  std::filesystem::remove(spec);
}

// --per-op N stops at --timeout as every phase does: a million steps asked (an hour and more of the
// reference backend), kQuick's 2 s allowed, so each op is timed over fewer steps than asked (at
// least one), and says how many.
TEST(CompareCli, PerOpTimingStopsAtTheTimeout) {
  const std::string spec = temp_path("tiny.yaml");
  std::ofstream(spec) << kSpec;
  const nlohmann::json doc = compare(spec, " --per-op 1000000 --filter tiny/standard");
  ASSERT_EQ(doc["results"].size(), 1u);
  const auto& ops = doc["results"][0]["op_times"];
  ASSERT_TRUE(ops.contains("conv")) << ops.dump();
  for (const auto& [op, t] : ops.items()) {
    EXPECT_GE(t["samples"].get<int64_t>(), 1) << op;
    EXPECT_LT(t["samples"].get<int64_t>(), 1'000'000) << op;
  }
  std::filesystem::remove(spec);
}

TEST(CompareCli, AVariantThatDoesNotFitReportsOomWhileTheOthersRun) {
  const std::string spec = temp_path("tiny.yaml");
  std::ofstream(spec) << kSpec;
  // Put the limit between the smallest and the largest predicted training peak.
  const std::string analyzed = temp_path("analyzed.json");
  ASSERT_EQ(run_cli("analyze " + spec + " --json " + analyzed).exit_code, 0);
  const nlohmann::json a = nlohmann::json::parse(read_file(analyzed));
  std::vector<int64_t> peaks;
  for (int i = 0; i < 3; ++i) peaks.push_back(a["results"][i]["memory"]["predicted_peak_bytes"].get<int64_t>());
  const int64_t lo = *std::min_element(peaks.begin(), peaks.end()), hi = *std::max_element(peaks.begin(), peaks.end());
  ASSERT_LT(lo, hi);
  const int64_t limit = (lo + hi) / 2;
  const nlohmann::json doc = compare(spec, " --memory-limit " + std::to_string(limit));
  int oom = 0, ok = 0;
  for (int i = 0; i < 3; ++i) {
    const auto& row = doc["results"][i];
    if (peaks[static_cast<size_t>(i)] > limit) {
      EXPECT_EQ(row["status"], "oom");
      EXPECT_NE(row["message"].get<std::string>().find("bytes requested"), std::string::npos);
      EXPECT_FALSE(row["time_ms"].contains("step"));
      ++oom;
    } else {
      EXPECT_EQ(row["status"], "ok") << row["message"];
      ++ok;
    }
  }
  EXPECT_GT(oom, 0);
  EXPECT_GT(ok, 0);
  std::filesystem::remove(spec);
  std::filesystem::remove(analyzed);
}

TEST(CompareCli, DeviceErrorsAreUsageErrors) {
  const std::string spec = temp_path("tiny.yaml");
  std::ofstream(spec) << kSpec;
  const auto bad = run_cli("compare " + spec + " --device tpu");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--device"), std::string::npos) << bad.err;
  const auto limit = run_cli("compare " + spec + " --memory-limit lots");
  EXPECT_EQ(limit.exit_code, 2);
  EXPECT_NE(limit.err.find("--memory-limit"), std::string::npos) << limit.err;
  // Host backends have no device work to record: --graph is refused before anything runs.
  const auto graph = run_cli("compare " + spec + " --device reference --graph -q");
  EXPECT_EQ(graph.exit_code, 2);
  EXPECT_NE(graph.err.find("error: command line: --graph: the reference backend runs every op from the host"),
            std::string::npos)
      << graph.err;
  EXPECT_TRUE(graph.out.empty()) << graph.out;
  // The CUDA backend's switches are checked by name on every device, and the graph API, which
  // chooses by cuDNN's heuristics, refuses find mode before anything runs.
  for (const char* flag :
       {"--cudnn-api frontend", "--depthwise-conv fastest", "--linear blas", "--conv-fusion conv_bn"}) {
    const auto wrong = run_cli("compare " + spec + " --device reference -q " + flag);
    EXPECT_EQ(wrong.exit_code, 2) << flag;
    EXPECT_NE(wrong.err.find(std::string(flag).substr(0, std::string(flag).find(' '))), std::string::npos) << wrong.err;
  }
  const auto graph_find = run_cli("compare " + spec + " --device reference -q --cudnn-api graph --cudnn-algo find");
  EXPECT_EQ(graph_find.exit_code, 2);
  EXPECT_NE(graph_find.err.find("--cudnn-api graph chooses engines by cuDNN's heuristics"), std::string::npos)
      << graph_find.err;
  EXPECT_TRUE(graph_find.out.empty()) << graph_find.out;
  // The reference backend fuses nothing (cuda's rule, the graph API, is CpuConvFusion's).
  const auto reference_fusion = run_cli("compare " + spec + " --device reference -q --conv-fusion conv_act");
  EXPECT_EQ(reference_fusion.exit_code, 2);
  EXPECT_NE(reference_fusion.err.find("--conv-fusion conv_act: the reference backend runs every op apart"),
            std::string::npos)
      << reference_fusion.err;
  EXPECT_TRUE(reference_fusion.out.empty()) << reference_fusion.out;
  // cpu has no conv that writes its output's sums: conv_bn_stats is cuDNN's.
  const auto cpu_stats = run_cli("compare " + spec + " --device cpu -q --conv-fusion conv_bn_stats");
  EXPECT_EQ(cpu_stats.exit_code, 2);
  EXPECT_NE(cpu_stats.err.find("--conv-fusion conv_bn_stats: cpu has no conv that also writes its output's"),
            std::string::npos)
      << cpu_stats.err;
  EXPECT_TRUE(cpu_stats.out.empty()) << cpu_stats.out;
  // The CUDA backend's choices change nothing on a host backend: refused there, never a silent A/B.
  for (const char* flag : {"--cudnn-api graph", "--depthwise-conv cudnn", "--linear cublas", "--cudnn-algo find"})
    for (const char* device : {"cpu", "reference"}) {
      const auto host = run_cli("compare " + spec + " --memory-only -q --device " + device + " " + flag);
      EXPECT_EQ(host.exit_code, 2) << flag << " on " << device;
      EXPECT_NE(
          host.err.find(std::string(flag) + " chooses how the cuda backend computes; this run's device is " + device),
          std::string::npos)
          << host.err;
      EXPECT_TRUE(host.out.empty()) << host.out;
    }
  // Without a usable GPU (or without the CUDA backend), --device cuda is a clear usage error.
  const auto cuda = run_cli("compare " + spec + " --device cuda --memory-only -q");
  if (cuda.exit_code != 0) {
    EXPECT_EQ(cuda.exit_code, 2);
    EXPECT_NE(cuda.err.find("error: command line: --device: cuda: "), std::string::npos) << cuda.err;
  }
  std::filesystem::remove(spec);
}

}  // namespace
}  // namespace convbench

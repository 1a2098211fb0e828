// `convbench explain`: the rules on constructed facts (a compute-bound op, a memory-bound op, a
// launch-bound step, fewer FLOPs yet slower), the memory model's attribution of saved bytes for
// every config variant, and the command end to end on the seed block (golden text for a run
// without timing, JSON facts equal to the memory model and to `analyze`).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "analysis/variant_analysis.hpp"
#include "cli_harness.hpp"
#include "explain/explain_rules.hpp"
#include "explain/explanation_output.hpp"
#include "shipped_configs.hpp"
#include "spec/spec_loader.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::read_file;
using testing::run_cli;
using testing::temp_path;

std::string source_path(const std::string& rel) { return std::string(CONVBENCH_SOURCE_DIR) + "/" + rel; }

bool contains(const std::vector<std::string>& sentences, const std::string& part) {
  return std::any_of(sentences.begin(), sentences.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

OpFacts op(const std::string& name, const std::string& kind, int64_t flops, int64_t bytes, std::optional<double> ms) {
  OpFacts o;
  o.name = name;
  o.kind = kind;
  o.flops = flops;
  o.macs = flops / 2;
  o.bytes = bytes;
  o.time_ms = ms;
  return o;
}

const DeviceLimits kLimits{1e11, 1e10, "test"};  // ridge point 10 FLOP/B

TEST(ExplainRules, ComputeBoundOpAgainstItsFloor) {
  OpFacts o = op("c", "conv", 1'000'000'000, 1'000'000, 20.0);  // intensity 1000: floor 10 ms of compute
  classify_op(o, kLimits);
  EXPECT_EQ(o.bound, Bound::compute);
  ASSERT_TRUE(o.floor_ms && o.of_floor);
  EXPECT_DOUBLE_EQ(*o.floor_ms, 10.0);
  EXPECT_DOUBLE_EQ(*o.of_floor, 0.5);
}

TEST(ExplainRules, MemoryBoundOpAgainstItsFloor) {
  OpFacts o = op("r", "relu", 1'000'000, 100'000'000, 40.0);  // intensity 0.01: floor 10 ms of traffic
  classify_op(o, kLimits);
  EXPECT_EQ(o.bound, Bound::memory);
  EXPECT_DOUBLE_EQ(*o.floor_ms, 10.0);
  EXPECT_DOUBLE_EQ(*o.of_floor, 0.25);
  OpFacts ridge = op("e", "conv", 10'000, 1'000, std::nullopt);  // exactly at the ridge point
  classify_op(ridge, kLimits);
  EXPECT_EQ(ridge.bound, Bound::compute);
  EXPECT_FALSE(ridge.of_floor);  // no time, no fraction
}

VariantFacts variant(const std::string& name, bool baseline, double step_ms, std::vector<OpFacts> ops) {
  VariantFacts f;
  f.block = "b";
  f.variant = name;
  f.is_baseline = baseline;
  f.trust = "ok";
  f.dtype = "float32";
  f.time_ms = step_ms;
  double sum = 0;
  for (const OpFacts& o : ops) {
    f.flops += o.flops;
    f.bytes += o.bytes;
    sum += o.time_ms.value_or(0);
    f.launches.op_runs += 2;
  }
  f.launches.op_time_sum_ms = sum;
  f.launches.outside_ops_share = std::max(0.0, 1.0 - sum / step_ms);
  f.ops = std::move(ops);
  return f;
}

TEST(ExplainRules, LaunchBoundStepIsSaidSo) {
  // Ops add up to 6 of a 10 ms step: 40% of it is in no op.
  const VariantFacts launch =
      variant("small", true, 10.0, {op("c", "conv", 1000, 1000, 4.0), op("r", "relu", 10, 1000, 2.0)});
  const Explanation e = build_explanation({launch}, "cpu", kLimits);
  ASSERT_EQ(e.blocks.size(), 1u);
  const auto& s = e.blocks[0].variants[0].sentences;
  EXPECT_TRUE(contains(s, "40% of its step time is in no op: launch-bound")) << ::testing::PrintToString(s);

  const VariantFacts busy = variant("big", true, 10.0, {op("c", "conv", 1000, 1000, 9.0)});
  const Explanation e2 = build_explanation({busy}, "cpu", kLimits);
  const auto& s2 = e2.blocks[0].variants[0].sentences;
  EXPECT_TRUE(contains(s2, "10% of its step time is in no op."));
  EXPECT_FALSE(contains(s2, "launch-bound"));
}

// A speed is the runtime's: the sentence says which one (PyTorch may rank the two the other way).
TEST(ExplainRules, FewerFlopsYetSlowerSaysWhichRuntime) {
  VariantFacts base = variant("standard", true, 10.0, {op("conv", "conv", 10'000'000'000, 1'000'000, 9.0)});
  VariantFacts bott = variant("bottleneck", false, 15.0, {op("b.conv", "conv", 7'000'000'000, 1'000'000, 14.0)});
  base.device = bott.device = "cpu";
  const Explanation e = build_explanation({base, bott}, "cpu", kLimits);
  const std::vector<std::string>& s = e.blocks.at(0).variants.at(1).sentences;
  EXPECT_TRUE(contains(s, "takes 1.50x its step time on convbench's cpu runtime: fewer FLOPs, yet slower."))
      << ::testing::PrintToString(s);
}

TEST(ExplainRules, FewerFlopsYetSlowerNamesTheKindsThatCost) {
  const VariantFacts base = variant("standard", true, 10.0, {op("conv", "conv", 10'000'000'000, 1'000'000, 9.0)});
  const VariantFacts bott =
      variant("bottleneck", false, 15.0,
              {op("a.conv", "conv", 1'000'000, 10'000'000, 3.0), op("a.norm", "batch_norm", 100, 10'000'000, 3.0),
               op("b.conv", "conv", 7'000'000'000, 1'000'000, 7.0), op("b.norm", "batch_norm", 100, 10'000'000, 1.5)});
  const Explanation e = build_explanation({bott, base}, "cpu", kLimits);  // the baseline comes first anyway
  const BlockExplanation& b = e.blocks.at(0);
  EXPECT_EQ(b.baseline, "standard");
  ASSERT_EQ(b.variants.size(), 2u);
  EXPECT_EQ(b.variants[0].facts.variant, "standard");
  const VariantExplanation& v = b.variants[1];
  EXPECT_TRUE(contains(v.sentences, "fewer FLOPs, yet slower")) << ::testing::PrintToString(v.sentences);
  // batch_norm: +4.5 ms (2 against 0), conv: +1 ms (2 against 1): batch_norm first.
  ASSERT_GE(v.by_kind.size(), 2u);
  EXPECT_EQ(v.by_kind[0].kind, "batch_norm");
  EXPECT_DOUBLE_EQ(v.by_kind[0].delta_ms(), 4.5);
  EXPECT_EQ(v.by_kind[1].kind, "conv");
  EXPECT_EQ(v.by_kind[1].base_ops, 1);
  EXPECT_TRUE(contains(v.sentences, "Its step is 5.00 ms slower; by op kind: batch_norm +4.50 ms (2 ops against 0)"))
      << ::testing::PrintToString(v.sentences);
  // The main ops (80% of 14.5 ms): b.conv 7, then a.conv 3, a.norm 3 reach 13 >= 11.6.
  EXPECT_EQ(v.main_ops, (std::vector<std::string>{"b.conv", "a.conv", "a.norm"}));
  EXPECT_TRUE(contains(v.sentences, "a.conv and a.norm are memory-bound"));
  EXPECT_TRUE(contains(v.sentences, "b.conv is compute-bound"));
}

// An op measured faster than its floor is evidence that the limits are too low (a busy machine's
// measurement, a --peak-flops too small): said so, never stated as "runs at 139% of its floor".
TEST(ExplainRules, AnOpFasterThanItsFloorSaysTheLimitsAreTooLow) {
  DeviceLimits low = kLimits;
  low.remedy = "re-measure them with --calibrate";
  // conv1: 1.39 GFLOP in 10 ms against a 13.9 ms floor; relu: 0.5 of its floor.
  const VariantFacts f =
      variant("v", true, 30.0,
              {op("conv1", "conv", 1'390'000'000, 1'000'000, 10.0), op("relu", "relu", 1'000'000, 100'000'000, 20.0)});
  const Explanation e = build_explanation({f}, "cpu", low);
  const auto& s = e.blocks[0].variants[0].sentences;
  EXPECT_TRUE(contains(s,
                       "conv1 ran faster than the floor drawn from these limits (139% of it): the limits are too "
                       "low, as no cache makes FLOPs faster; re-measure them with --calibrate."))
      << ::testing::PrintToString(s);
  EXPECT_TRUE(contains(s,
                       "conv1 is compute-bound: arithmetic intensity 1390 FLOP/B, at or above the ridge point 10 "
                       "FLOP/B."))
      << ::testing::PrintToString(s);
  EXPECT_FALSE(contains(s, "139% of its roofline floor"));
  EXPECT_TRUE(contains(s,
                       "relu is memory-bound: arithmetic intensity 0.010 FLOP/B, below the ridge point 10 FLOP/B; "
                       "it runs at 50% of its roofline floor."))
      << ::testing::PrintToString(s);

  // A memory-bound op beyond its floor may have had its data in a cache: both are said.
  const VariantFacts cached = variant("w", true, 10.0, {op("act", "relu", 1'000'000, 100'000'000, 8.0)});
  const Explanation ec = build_explanation({cached}, "cpu", low);
  const auto& m = ec.blocks[0].variants[0].sentences;
  EXPECT_TRUE(contains(m,
                       "act ran faster than the floor drawn from these limits (125% of it): the bandwidth is too "
                       "low, or its data stayed in a cache, which the floor does not count"))
      << ::testing::PrintToString(m);
}

// --limits NAME of a GPU that did not run the rows: bounds and floors there, a lower bound, never a
// share of the time measured here.
TEST(ExplainRules, AnotherGpusDatasheetGivesLowerBoundsNotShares) {
  DeviceLimits h100{67e12, 3.35e12, "H100 SXM datasheet (float32, dense)"};
  h100.datasheet = "h100-sxm";
  h100.other_device = true;
  const VariantFacts f =
      variant("v", true, 30.0,
              {op("conv", "conv", 67'000'000'000, 1'000'000, 20.0), op("relu", "relu", 1'000'000, 335'000'000, 10.0)});
  const Explanation e = build_explanation({f}, "cpu", h100);
  const VariantExplanation& v = e.blocks[0].variants[0];
  EXPECT_FALSE(v.facts.ops[0].of_floor);
  ASSERT_TRUE(v.facts.ops[0].floor_ms);
  EXPECT_DOUBLE_EQ(*v.facts.ops[0].floor_ms, 1.0);
  EXPECT_TRUE(contains(v.sentences,
                       "conv is compute-bound on h100-sxm: arithmetic intensity 67000 FLOP/B, at or above "
                       "its ridge point 20 FLOP/B; its floor on h100-sxm from its datasheet is 1.00 ms: a "
                       "lower bound, not a prediction."))
      << ::testing::PrintToString(v.sentences);
  EXPECT_FALSE(contains(v.sentences, "roofline floor"));
  EXPECT_FALSE(contains(v.sentences, "ran faster than the floor"));  // 20 ms here against 1 ms there: no verdict
  EXPECT_NE(limits_line(e).find("Floor on h100-sxm from its datasheet: a lower bound, not a prediction; these rows "
                                "ran on cpu"),
            std::string::npos)
      << limits_line(e);
  const std::string text = explanation_text(e);
  EXPECT_NE(text.find("floor on h100-sxm (ms)"), std::string::npos);
  EXPECT_EQ(text.find("of floor"), std::string::npos);
}

TEST(ExplainRules, UnknownLimitsClassifyNothing) {
  const VariantFacts f = variant("v", true, 10.0, {op("c", "conv", 1000, 1000, 9.0)});
  const Explanation e = build_explanation({f}, "reference", std::nullopt);
  EXPECT_EQ(e.blocks[0].variants[0].facts.ops[0].bound, Bound::unknown);
  EXPECT_TRUE(contains(e.blocks[0].variants[0].sentences, "the device's limits are unknown"));
  EXPECT_NE(limits_line(e).find("unknown"), std::string::npos);
  // Limits for another dtype do not apply.
  const Explanation other = build_explanation({f}, "cpu", kLimits, "float16");
  EXPECT_EQ(other.blocks[0].variants[0].facts.ops[0].bound, Bound::unknown);
}

// Every config variant in training: the saved tensors the model lists add up to its saved bytes,
// each is kept by a recorded op, and the peak has a moment.
TEST(ExplainMemory, SavedTensorsAddUpToSavedBytesForEveryConfig) {
  for (const std::string& config : shipped_configs()) {
    const Spec spec = load_spec_file(config);
    for (const BlockSpec& block : spec.blocks)
      for (const VariantSpec& v : block.variants) {
        SCOPED_TRACE(std::filesystem::path(config).filename().string() + ": " + block.name + " / " + v.name);
        const MemoryPrediction p = predict_memory(build_variant_graph(block, v), true);
        int64_t sum = 0;
        for (const SavedTensorFacts& s : p.saved) {
          EXPECT_FALSE(s.saved_by.empty());
          if (s.counted) sum += s.bytes;
        }
        EXPECT_EQ(sum, p.saved_bytes);
        EXPECT_FALSE(p.peak_op.empty());
        EXPECT_TRUE(p.peak_phase == "forward" || p.peak_phase == "backward");
      }
  }
}

// Seed 000 in so many words: the bottleneck keeps 3 conv outputs (BN inputs) and 3 ReLU outputs
// where the standard block keeps 1 and 1: +48 MiB of activations, plus its two more BNs' statistics.
TEST(ExplainMemory, SeedBottleneckSavesThreeBnInputsAndThreeReluOutputs) {
  const Spec spec = load_spec_file(source_path("configs/seed-blocks.yaml"));
  const BlockSpec& block = spec.blocks.at(0);
  int64_t standard = 0, bottleneck = 0;
  auto activations = [](const MemoryPrediction& p) {
    int64_t sum = 0;
    for (const SavedTensorFacts& s : p.saved)
      if (s.counted && s.what.rfind("output of", 0) == 0) sum += s.bytes;
    return sum;
  };
  for (const VariantSpec& v : block.variants) {
    const MemoryPrediction p = predict_memory(build_variant_graph(block, v), true);
    if (v.name == "standard") standard = activations(p);
    if (v.name != "bottleneck") continue;
    bottleneck = activations(p);
    // Two more batch norms' statistics: mean and inverse stdev of 16 channels, float32, each.
    EXPECT_EQ(p.saved_bytes - bottleneck, (2 * 16 + 2 * 16 + 2 * 32) * 4);
    int conv_outputs = 0, relu_outputs = 0;
    for (const SavedTensorFacts& s : p.saved) {
      if (s.what.rfind("output of", 0) == 0 && s.producer.find(".conv") != std::string::npos) ++conv_outputs;
      if (s.what.rfind("output of", 0) == 0 && s.producer.find(".act") != std::string::npos) ++relu_outputs;
    }
    EXPECT_EQ(conv_outputs, 3);
    EXPECT_EQ(relu_outputs, 3);
  }
  EXPECT_EQ(bottleneck - standard, int64_t{48} << 20);
}

// The seed block at 8^3 on the reference backend, memory only: the explanation the golden text
// holds. The reference backend's bytes are the memory model's on every machine; the cpu backend's
// add oneDNN's workspace, which its kernels for this CPU's instruction set and threads decide, so
// a golden text of them would hold one machine's answer.
const char* kGoldenExplain = " --device reference --sweep size=8 --memory-only -q";

// Without timing the explanation is deterministic: golden text. Its JSON facts, on the cpu
// backend at full size, equal analyze's, and its measured peaks the predicted ones.
TEST(ExplainCli, SeedMemoryOnlyGoldenAndJsonAgreeWithAnalyze) {
  const std::string json = temp_path("explain.json"), analyzed = temp_path("analyze.json");
  const auto golden = run_cli("explain " + source_path("configs/seed-blocks.yaml") + kGoldenExplain +
                              " --peak-flops 4e11 --bandwidth 2.8e10");
  ASSERT_EQ(golden.exit_code, 0) << golden.err;
  EXPECT_EQ(golden.out, read_file(source_path("tests/golden/explain_seed_memory.txt")));
  const auto r = run_cli("explain " + source_path("configs/seed-blocks.yaml") +
                         " --device cpu --memory-only --peak-flops 4e11 --bandwidth 2.8e10 -q --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --json " + analyzed).exit_code, 0);
  const auto e = nlohmann::json::parse(read_file(json));
  const auto a = nlohmann::json::parse(read_file(analyzed));
  EXPECT_EQ(e["schema"], kExplanationSchema);
  EXPECT_DOUBLE_EQ(e["device_limits"]["ridge_flop_per_byte"].get<double>(), 4e11 / 2.8e10);
  const auto& variants = e["blocks"][0]["variants"];
  ASSERT_EQ(variants.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& row = a["results"][i];
    const auto& v = variants[i];
    SCOPED_TRACE(v["variant"].get<std::string>());
    EXPECT_EQ(v["variant"], row["variant"]);
    EXPECT_EQ(v["params"], row["params"]);
    EXPECT_EQ(v["memory"]["saved_bytes"], row["memory"]["predicted"]["saved_bytes"]);
    int64_t flops = 0, saved = 0;
    for (const auto& o : v["ops"]) {
      flops += o["flops"].get<int64_t>();
      saved += o["saved_bytes"].get<int64_t>();
    }
    EXPECT_EQ(flops, v["flops"].get<int64_t>());
    EXPECT_EQ(saved, v["memory"]["saved_bytes"].get<int64_t>());
    // Measured on cpu: the allocator's peak equals the explanation's predicted peak.
    EXPECT_EQ(v["memory"]["peak_bytes_measured"], v["memory"]["peak_bytes_predicted"]);
  }
  std::filesystem::remove(json);
  std::filesystem::remove(analyzed);
}

// Under AMP the explanation says what autocast changed: which ops compute in the low dtype with
// copies of their weights, how many bytes of those copies backward keeps, where casts went.
TEST(ExplainCli, MixedPrecisionSaysWhatAutocastChanged) {
  const std::string json = temp_path("explain-amp.json");
  const auto r =
      run_cli("explain " + source_path("configs/seed-blocks.yaml") +
              " --device reference --memory-only --sweep precision=amp_bfloat16 --sweep size=8 -q --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Precision amp_bfloat16 (torch.autocast): conv computes in bfloat16 with bfloat16 copies "
                       "of the float32 weights"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 cast converts activations (conv.cast)"), std::string::npos) << r.out;
  const auto e = nlohmann::json::parse(read_file(json));
  const auto& standard = e["blocks"][0]["variants"][0];
  EXPECT_EQ(standard["precision"]["low_ops"], nlohmann::json::array({"conv"}));
  // The conv's bfloat16 weight, 32 x 16 x 3^3, is the one weight copy kept.
  EXPECT_EQ(standard["precision"]["saved_weight_copy_bytes"], 32 * 16 * 27 * 2);
  // Against the same variant in float32, from an independent analysis of the plain graph.
  const auto plain = run_cli("analyze " + source_path("configs/seed-blocks.yaml") + " --sweep size=8 --json -");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto plain_results = nlohmann::json::parse(plain.out);
  const auto& plain_row = plain_results["results"][0];
  ASSERT_EQ(plain_row["variant"], "standard");
  EXPECT_EQ(standard["precision"]["plain"]["saved_bytes"], plain_row["memory"]["predicted"]["saved_bytes"]);
  EXPECT_EQ(standard["precision"]["plain"]["peak_bytes"], plain_row["memory"]["predicted_peak_bytes"]);
  EXPECT_LT(standard["memory"]["saved_bytes"].get<int64_t>(),
            plain_row["memory"]["predicted"]["saved_bytes"].get<int64_t>());
  EXPECT_NE(r.out.find("Against float32 (precision plain) it keeps "), std::string::npos) << r.out;
  // bfloat16 scales no loss; float16 does, and says so.
  EXPECT_EQ(r.out.find("GradScaler"), std::string::npos) << r.out;
  const auto f16 = run_cli("explain " + source_path("configs/seed-blocks.yaml") +
                           " --device reference --memory-only --sweep precision=amp_float16 --sweep size=8 -q");
  ASSERT_EQ(f16.exit_code, 0) << f16.err;
  EXPECT_NE(f16.out.find("float16 scales the loss as GradScaler does"), std::string::npos) << f16.out;
  std::filesystem::remove(json);
}

// Rates as datasheets write them: 400G FLOP/s and 28G bytes/s are 4e11 and 2.8e10; a unit that
// is not a decimal prefix is a usage error naming the flag.
TEST(ExplainCli, DeviceRatesTakeDecimalUnitSuffixes) {
  const std::string json = temp_path("explain_units.json");
  auto r = run_cli("explain " + source_path("configs/seed-blocks.yaml") + kGoldenExplain +
                   " --peak-flops 400G --bandwidth 28G --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(source_path("tests/golden/explain_seed_memory.txt")));
  const auto e = nlohmann::json::parse(read_file(json));
  EXPECT_DOUBLE_EQ(e["device_limits"]["peak_flops"].get<double>(), 4e11);
  EXPECT_DOUBLE_EQ(e["device_limits"]["ridge_flop_per_byte"].get<double>(), 4e11 / 2.8e10);
  std::filesystem::remove(json);
  r = run_cli("explain " + source_path("configs/seed-blocks.yaml") +
              " --device cpu --memory-only --peak-flops 19.5TiB --bandwidth 1.6T -q --json " + json);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--peak-flops"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(json));
}

// explain --limits NAME on the cpu: floors on that GPU, said to be a lower bound there (no timing:
// the floors need none).
TEST(ExplainCli, LimitsOfANamedGpuAreALowerBoundThere) {
  const std::string json = temp_path("explain_h100.json");
  const auto r = run_cli("explain " + source_path("configs/seed-blocks.yaml") +
                         " --device cpu --memory-only --limits h100-sxm -q --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Device limits of h100-sxm: peak 67000 GFLOP/s, bandwidth 3350 GB/s, ridge point 20.0 FLOP/B "
                        "(H100 SXM datasheet (float32, dense)), for float32 rows. Floor on h100-sxm from its "
                        "datasheet: a lower bound, not a prediction; these rows ran on cpu",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("Not timed; by counted intensity conv is compute-bound on h100-sxm"), std::string::npos);
  EXPECT_NE(r.out.find("floor on h100-sxm (ms)"), std::string::npos);
  EXPECT_EQ(r.err.find("measuring"), std::string::npos) << r.err;  // a named GPU: nothing measured
  const auto e = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(e["device_limits"]["datasheet"], "h100-sxm");
  EXPECT_EQ(e["device_limits"]["other_device"], true);
  std::filesystem::remove(json);
}

TEST(ExplainCli, UnknownLimitsNameExitsTwoWithTheNamesAndWritesNothing) {
  const std::string json = temp_path("explain_nonesuch.json");
  auto r = run_cli("explain " + source_path("configs/seed-blocks.yaml") +
                   " --device cpu --memory-only --limits h100 --json " + json);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error: command line: --limits: unknown device \"h100\": convbench has the datasheets of "
                       "h100-sxm, h100-pcie, h200, a100-40gb, a100-80gb, l4, l40s, a10, v100-sxm2, rtx-4090"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(json));
  r = run_cli("explain " + source_path("configs/seed-blocks.yaml") +
              " --device cpu --memory-only --limits l4 --peak-flops 1T --bandwidth 1T --json " + json);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--limits: names the limits already"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(json));
  // The same check on compare's roofline flag, before any run.
  r = run_cli("compare " + source_path("configs/seed-blocks.yaml") + " --device cpu --limits nonesuch --json " + json);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown device \"nonesuch\""), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(json));
}

TEST(ExplainCli, BadInputExitsTwoAndWritesNothing) {
  const std::string json = temp_path("explain_bad.json");
  auto r =
      run_cli("explain " + source_path("configs/seed-blocks.yaml") + " --memory-only --peak-flops 4e11 --json " + json);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--bandwidth"), std::string::npos) << r.err;
  r = run_cli("explain " + source_path("configs/seed-blocks.yaml") + " --memory-only --format json --json - ");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
  r = run_cli("explain " + source_path("tests/data/malformed/specs/alias-run-bomb.yaml") + " --memory-only --json " +
              json);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(json));
}

}  // namespace
}  // namespace convbench

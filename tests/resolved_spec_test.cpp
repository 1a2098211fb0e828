// The resolved spec (`validate --resolved-json`): what the PyTorch peer builds its modules from,
// so every default must appear resolved, exactly as the variant builder applied it.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_harness.hpp"
#include "spec/spec_loader.hpp"
#include "variants/resolved_spec.hpp"

namespace convbench {
namespace {

const char* kSpec = R"(
name: resolved
sweep:
  batch: [2, 4]
  layout: [channels_first, channels_last]
blocks:
  - name: b
    in_channels: 8
    out_channels: 16
    size: 10
    kernel: 5
    dilation: 2
    variants:
      - standard
      - {kind: bottleneck, ratio: 2}
      - kind: custom
        name: odd
        ops:
          - {op: conv, name: dw, groups: depthwise}
          - {op: avg_pool, name: ap, stride: 1}
          - {op: conv_transpose, name: t, out_channels: 16, kernel: 2, stride: 2}
          - {op: group_norm, name: g, norm_groups: 2}
)";

TEST(ResolvedSpec, EveryDefaultAppearsResolvedAsTheVariantBuilderAppliedIt) {
  const nlohmann::ordered_json doc = resolved_spec_json(parse_spec_text(kSpec, "resolved.yaml"));
  EXPECT_EQ(doc["schema"], kResolvedSpecSchema);
  EXPECT_EQ(doc["name"], "resolved");
  ASSERT_EQ(doc["blocks"].size(), 4u);  // block-major, first sweep key slowest
  const auto& first = doc["blocks"][0];
  EXPECT_EQ(first["point_label"], "batch=2,layout=channels_first");
  EXPECT_EQ(doc["blocks"][1]["point_label"], "batch=2,layout=channels_last");
  EXPECT_EQ(doc["blocks"][2]["point"].dump(), R"({"batch":4,"layout":"channels_first"})");
  EXPECT_EQ(first["padding"], nlohmann::ordered_json({4, 4}));  // "same": dilation * (kernel - 1) / 2
  EXPECT_EQ(first["norm"], "batch");
  EXPECT_EQ(first["baseline"], "standard");
  EXPECT_EQ(first["variants"][1].dump(),
            R"({"kind":"bottleneck","name":"bottleneck","ratio":2,"groups":1,"memory_policy":"none"})");

  const auto& ops = first["variants"][2]["ops"];
  EXPECT_EQ(ops[0]["inputs"], nlohmann::ordered_json({"input"}));
  EXPECT_EQ(ops[0]["groups"], 8);  // depthwise: the input's channels
  EXPECT_EQ(ops[0]["out_channels"], 8);
  EXPECT_EQ(ops[0]["kernel"], nlohmann::ordered_json({5, 5}));   // the block's kernel
  EXPECT_EQ(ops[0]["padding"], nlohmann::ordered_json({2, 2}));  // "same" with the op's dilation (1), not the block's
  EXPECT_EQ(ops[0]["bias"], true);
  EXPECT_EQ(ops[1]["kernel"], nlohmann::ordered_json({2, 2}));  // a pool's own default, not the block's kernel
  EXPECT_EQ(ops[1]["stride"], nlohmann::ordered_json({1, 1}));
  EXPECT_EQ(ops[2]["output_padding"], nlohmann::ordered_json({0, 0}));
  EXPECT_EQ(ops[2]["stride"], nlohmann::ordered_json({2, 2}));
  EXPECT_EQ(ops[3]["norm_groups"], 2);
  EXPECT_EQ(first["variants"][2]["output"], "g");  // the last op by default
}

// inplace_abn fuses bn and act into one op; the resolved spec still lists the ops the file wrote,
// as their kinds resolve them (the peer applies the policy to its own modules).
TEST(ResolvedSpec, CustomOpsAreResolvedBeforeTheMemoryPolicy) {
  const nlohmann::ordered_json doc = resolved_spec_json(parse_spec_text(R"(
blocks:
  - name: b
    batch: 2
    in_channels: 8
    out_channels: 8
    size: 8
    variants:
      - kind: custom
        memory_policy: inplace_abn
        ops:
          - {op: conv, name: c}
          - {op: batch_norm, name: bn}
          - {op: leaky_relu, name: act, negative_slope: 0.1}
)",
                                                                        "abn.yaml"));
  const auto& v = doc["blocks"][0]["variants"][0];
  EXPECT_EQ(v["memory_policy"], "inplace_abn");
  ASSERT_EQ(v["ops"].size(), 3u);
  EXPECT_EQ(v["ops"][1].dump(), R"({"op":"batch_norm","name":"bn","inputs":["c"]})");
  EXPECT_EQ(v["ops"][2]["negative_slope"], 0.1);
  EXPECT_EQ(v["output"], "act");
}

TEST(ResolvedSpecCli, WritesTheFileOrStandardOutputAndRefusesToOverwriteTheSpec) {
  const std::string spec = testing::source_path("configs/seed-blocks.yaml");
  const std::string out = testing::temp_path("resolved.json");
  std::filesystem::remove(out);
  const testing::CliResult written = testing::run_cli("validate " + spec + " --resolved-json " + out);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_NE(written.out.find(": ok ("), std::string::npos);
  const nlohmann::json file = nlohmann::json::parse(testing::read_file(out));
  EXPECT_EQ(file["schema"], kResolvedSpecSchema);
  std::filesystem::remove(out);

  const testing::CliResult piped = testing::run_cli("validate " + spec + " --resolved-json -");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(nlohmann::json::parse(piped.out), file) << "standard output carries the JSON alone";

  const testing::CliResult refused = testing::run_cli("validate " + spec + " --resolved-json " + spec);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--resolved-json: is also an input of this command"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace convbench

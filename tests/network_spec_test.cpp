// The `networks:` section: parsing (YAML and JSON alike), expansion into one graph per variant
// (units, $params, repeat, slots, fills, custom variants with slot expressions, skip connections
// across stages), the op naming rule, and every class of bad input as a located InputError.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "analysis/variant_analysis.hpp"
#include "spec/network_spec.hpp"
#include "spec/spec_loader.hpp"
#include "variants/network_builder.hpp"
#include "variants/resolved_spec.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

// A small U-Net-like network: two down stages, one up stage with a skip from the first, a head.
// Lines are numbered in the comments so that the expected locations below can be checked.
std::string small_network(const std::string& stage2 = "", const std::string& variants = "") {
  return "networks:\n"                                                                    // 1
         "  - name: net\n"                                                                // 2
         "    dims: 2\n"                                                                  // 3
         "    batch: 2\n"                                                                 // 4
         "    in_channels: 3\n"                                                           // 5
         "    size: 16\n"                                                                 // 6
         "    dropout: 0.1\n"                                                             // 7
         "    variants:\n"                                                                // 8
         "      - standard\n"                                                             // 9
         "      - {kind: bottleneck, ratio: 2, fills: [spatial]}\n"                       // 10
         "      - kind: custom\n"                                                         // 11
         "        name: halved\n"                                                         // 12
         "        ops:\n"                                                                 // 13
         "          - {op: conv, name: a, out_channels: out/2, kernel: 1, padding: 0}\n"  // 14
         "          - {op: conv, name: b, out_channels: out, stride: slot}\n"             // 15
         + variants +
         "    units:\n"
         "      down:\n"
         "        params: {out: required, convs: 1, stride: 2}\n"
         "        ops:\n"
         "          - {op: slot, name: reduce, out_channels: $out, stride: $stride, class: spatial}\n"
         "          - {op: slot, name: convs, repeat: $convs}\n"
         "          - {op: add, name: sum, inputs: [convs, reduce]}\n"
         "    stages:\n"
         "      - name: d0\n"
         "        ops: [{unit: down, name: block, args: {out: 8, stride: 1}}]\n"
         "      - name: d1\n"
         "        ops: [{unit: down, name: block, args: {out: 16, convs: 2}}]\n" +
         (stage2.empty() ? "      - name: up\n"
                           "        ops:\n"
                           "          - {op: upsample, name: up, scale: 2}\n"
                           "          - {op: slot, name: fit, out_channels: 8, kernel: 1, padding: 0}\n"
                           "          - {op: concat, name: cat, inputs: [d0, fit]}\n"
                           "          - {op: conv, name: head, out_channels: 1, kernel: 1, padding: 0}\n"
                         : stage2);
}

Spec parse(const std::string& text, const std::string& file = "net.yaml") { return parse_spec_text(text, file); }

// The first error of loading the spec and building every network variant, or "(no error)".
std::string error_of(const std::string& text, const std::string& file = "net.yaml") {
  try {
    const Spec spec = parse(text, file);
    for (const BlockSpec& b : spec.blocks)
      for (const VariantSpec& v : b.variants) build_variant_graph(b, v);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

bool has_op(const Graph& g, const std::string& name) {
  return std::any_of(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.name == name; });
}

// A string_view, not a std::string: GCC 13 flags a reference returned by a function that took a
// temporary string as possibly dangling (-Wdangling-reference), though it points into the graph.
const Op& op_named(const Graph& g, std::string_view name) {
  for (const Op& op : g.ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + std::string(name));
}

TEST(NetworkSpec, ParsesANetworkIntoOneEntryPerSweepPoint) {
  const Spec spec = parse(small_network());
  ASSERT_EQ(spec.blocks.size(), 1u);
  const BlockSpec& net = spec.blocks[0];
  ASSERT_TRUE(net.network);
  EXPECT_EQ(net.name, "net");
  EXPECT_EQ(net.key_path, "networks[0]");
  EXPECT_EQ(net.variants.size(), 3u);
  EXPECT_EQ(net.baseline, "standard");
  EXPECT_EQ(net.variants[1].fills, std::vector<std::string>{"spatial"});
  EXPECT_EQ(net.network->dropout_kind, DropoutKind::element);
}

TEST(NetworkSpec, StandardSlotsFollowTheNamingRule) {
  const Spec spec = parse(small_network());
  const Graph g = build_variant_graph(spec.blocks[0], spec.blocks[0].variants[0]);
  // <stage>.<entry>[.<repeat index>][.<unit entry>...][.<slot op>]
  for (const char* name :
       {"d0.block.reduce.conv", "d0.block.reduce.norm", "d0.block.reduce.act", "d0.block.reduce.dropout",
        "d0.block.convs.0.conv", "d0.block.sum", "d1.block.convs.1.conv", "up.up", "up.fit.conv", "up.cat", "up.head"})
    EXPECT_TRUE(has_op(g, name)) << name;
  EXPECT_FALSE(has_op(g, "d1.block.convs.2.conv"));
  for (const Op& op : g.ops)
    EXPECT_TRUE(op.name.rfind("d0.", 0) == 0 || op.name.rfind("d1.", 0) == 0 || op.name.rfind("up.", 0) == 0)
        << op.name;
  // d1 halves 16 -> 8; the skip concat reads d0 (8 channels at 16x16) and the upsampled fit.
  EXPECT_EQ(g.desc(op_named(g, "d1.block.sum").output).shape, (std::vector<int64_t>{2, 16, 8, 8}));
  EXPECT_EQ(g.desc(op_named(g, "up.cat").output).shape, (std::vector<int64_t>{2, 16, 16, 16}));
  EXPECT_EQ(g.desc(g.output).shape, (std::vector<int64_t>{2, 1, 16, 16}));
  // The unit's stride default (2) and the argument (1).
  EXPECT_EQ(op_named(g, "d0.block.reduce.conv").conv.stride, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(op_named(g, "d1.block.reduce.conv").conv.stride, (std::vector<int64_t>{2, 2}));
}

TEST(NetworkSpec, FillsPutsTheVariantOnlyIntoSlotsOfItsClasses) {
  const Spec spec = parse(small_network());
  const Graph g = build_variant_graph(spec.blocks[0], spec.blocks[0].variants[1]);
  EXPECT_TRUE(has_op(g, "d1.block.reduce.reduce.conv"));                       // class spatial: the bottleneck
  EXPECT_EQ(op_named(g, "d1.block.reduce.reduce.conv").conv.out_channels, 8);  // 16 / ratio 2
  EXPECT_TRUE(has_op(g, "d1.block.convs.0.conv"));                             // class conv: standard
  EXPECT_TRUE(has_op(g, "d1.block.reduce.dropout"));
}

TEST(NetworkSpec, CustomVariantReplacesTheConvWithSlotExpressions) {
  const Spec spec = parse(small_network());
  const Graph g = build_variant_graph(spec.blocks[0], spec.blocks[0].variants[2]);
  const Op& a = op_named(g, "d1.block.reduce.a");
  const Op& b = op_named(g, "d1.block.reduce.b");
  EXPECT_EQ(a.conv.out_channels, 8);                       // out/2 of the slot's 16
  EXPECT_EQ(b.conv.stride, (std::vector<int64_t>{2, 2}));  // stride: slot
  EXPECT_EQ(b.conv.kernel, (std::vector<int64_t>{3, 3}));  // the slot's kernel by default
  EXPECT_TRUE(has_op(g, "d1.block.reduce.norm"));
  EXPECT_TRUE(has_op(g, "d1.block.reduce.act"));
  EXPECT_FALSE(has_op(g, "d1.block.reduce.conv"));
}

TEST(NetworkSpec, ChannelDropoutKindEndsEverySlotWithChannelDropout) {
  std::string text = small_network();
  text.replace(text.find("    dropout: 0.1\n"), 17, "    dropout: 0.1\n    dropout_kind: channel\n");
  const Spec spec = parse(text);
  for (const VariantSpec& v : spec.blocks[0].variants) {
    const Graph g = build_variant_graph(spec.blocks[0], v);
    EXPECT_EQ(op_named(g, "d1.block.convs.1.dropout").kind, OpKind::channel_dropout) << v.name;
    EXPECT_EQ(op_named(g, "d1.block.reduce.dropout").kind, OpKind::channel_dropout) << v.name;
    EXPECT_DOUBLE_EQ(op_named(g, "d1.block.reduce.dropout").dropout_p, 0.1);
  }
}

TEST(NetworkSpec, SizeOfResizesToAnotherValuesSpatialSize) {
  const Spec spec =
      parse(small_network("      - name: up\n"
                          "        ops:\n"
                          "          - {op: upsample, name: up, mode: linear, size_of: d0}\n"
                          "          - {op: concat, name: cat, inputs: [d0, up]}\n"));
  const Graph g = build_variant_graph(spec.blocks[0], spec.blocks[0].variants[0]);
  EXPECT_EQ(g.desc(op_named(g, "up.up").output).shape, (std::vector<int64_t>{2, 16, 16, 16}));
  EXPECT_EQ(op_named(g, "up.up").upsample_size, (std::vector<int64_t>{16, 16}));
}

TEST(NetworkSpec, JsonAndYamlGiveTheSameGraph) {
  const std::string json = R"({"networks": [{"name": "n", "batch": 1, "in_channels": 2, "size": 8,
    "variants": ["standard"],
    "stages": [{"name": "s", "ops": [{"op": "slot", "name": "c", "out_channels": 4, "repeat": 2}]}]}]})";
  const std::string yaml =
      "networks:\n  - {name: n, batch: 1, in_channels: 2, size: 8, variants: [standard],\n"
      "     stages: [{name: s, ops: [{op: slot, name: c, out_channels: 4, repeat: 2}]}]}\n";
  const Spec a = parse(json, "n.json"), b = parse(yaml);
  const Graph ga = build_variant_graph(a.blocks[0], a.blocks[0].variants[0]);
  const Graph gb = build_variant_graph(b.blocks[0], b.blocks[0].variants[0]);
  ASSERT_EQ(ga.ops.size(), gb.ops.size());
  for (size_t i = 0; i < ga.ops.size(); ++i) EXPECT_EQ(ga.ops[i].name, gb.ops[i].name);
  EXPECT_EQ(ga.ops[3].name, "s.c.1.conv");
}

TEST(NetworkSpec, SweepOverridesTheNetworkInput) {
  SpecLimits limits;
  limits.sweep_overrides = {{"batch", "1,4"}, {"size", "[8,8]"}};
  const Spec spec = parse_spec_text(small_network(), "net.yaml", limits);
  ASSERT_EQ(spec.blocks.size(), 2u);
  EXPECT_EQ(spec.blocks[1].batch, 4);
  EXPECT_EQ(spec.blocks[1].size, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(point_label(spec.blocks[1]), "batch=4,size=[8,8]");
}

TEST(NetworkSpec, ResolvedSpecKeepsTheTemplatesAndListsTheExpansion) {
  const nlohmann::ordered_json r = resolved_spec_json(parse(small_network()));
  ASSERT_EQ(r["networks"].size(), 1u);
  const auto& n = r["networks"][0];
  EXPECT_EQ(n["kind"], "network");
  EXPECT_EQ(n["padding"], "same");
  EXPECT_EQ(n["units"]["down"]["ops"][0]["out_channels"], "$out");  // as written
  // The instance's args completed with the unit's defaults.
  EXPECT_EQ(n["stages"][0]["ops"][0]["args"], nlohmann::ordered_json::parse(R"({"out": 8, "stride": 1, "convs": 1})"));
  const auto& ops = n["variants"][2]["expanded_ops"];
  EXPECT_EQ(ops[0]["name"], "d0.block.reduce.a");
  EXPECT_EQ(ops[0]["inputs"], nlohmann::ordered_json::array({"input"}));
  EXPECT_EQ(ops[0]["out_channels"], 4);
  EXPECT_EQ(n["variants"][2]["output_shape"], nlohmann::ordered_json::array({2, 1, 16, 16}));
}

// ---- errors --------------------------------------------------------------------------------

// A unit whose instances choose its activation (MobileNetV3's ReLU and Hardswish blocks):
// `op: $act`, the argument naming an op kind; a word that is none is refused at the argument.
TEST(NetworkSpec, AnOpKindMayBeAUnitArgument) {
  const std::string text =
      "networks:\n"
      "  - name: net\n"
      "    batch: 2\n"
      "    in_channels: 4\n"
      "    size: 8\n"
      "    variants: [standard]\n"
      "    units:\n"
      "      block:\n"
      "        params: {act: required}\n"
      "        ops:\n"
      "          - {op: conv, name: c, kernel: 3, bias: false}\n"
      "          - {op: batch_norm, name: bn, eps: 0.001, momentum: 0.01}\n"
      "          - {op: $act, name: act}\n"
      "    stages:\n"
      "      - name: s\n"
      "        ops:\n"
      "          - {unit: block, name: a, args: {act: relu}}\n"
      "          - {unit: block, name: b, args: {act: hardswish}}\n";
  const Spec spec = parse(text);
  const Graph g = build_variant_graph(spec.blocks.at(0), spec.blocks.at(0).variants.at(0));
  EXPECT_EQ(op_named(g, "s.a.act").kind, OpKind::relu);
  EXPECT_EQ(op_named(g, "s.b.act").kind, OpKind::hardswish);
  EXPECT_DOUBLE_EQ(op_named(g, "s.b.bn").norm.eps, 1e-3);
  EXPECT_DOUBLE_EQ(op_named(g, "s.b.bn").norm.momentum, 0.01);
  std::string bad = text;
  bad.replace(bad.find("act: hardswish"), 14, "act: hardswsh");
  const std::string err = error_of(bad);
  EXPECT_NE(err.find("net.yaml:18:"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown op \"hardswsh\""), std::string::npos) << err;
  EXPECT_NE(err.find("did you mean \"hardswish\""), std::string::npos) << err;
}

TEST(NetworkSpecErrors, FoldedAndBranchesAreBlockKinds) {
  EXPECT_EQ(error_of(small_network("", "      - {kind: folded, of: standard}\n")),
            "net.yaml:16:16: networks[0].variants[3].kind: a folded variant folds one block's graph; networks do not "
            "take folded variants (fold the block in `blocks:`, where the proof and the comparison with its source "
            "run)");
  EXPECT_EQ(error_of(small_network("", "      - branches\n")),
            "net.yaml:16:9: networks[0].variants[3]: branches is a block kind; networks do not take it (use it in "
            "`blocks:`)");
}

TEST(NetworkSpecErrors, SkipConnectionOfDifferentShapes) {
  EXPECT_EQ(error_of(small_network("      - name: up\n"
                                   "        ops:\n"
                                   "          - {op: add, name: bad, inputs: [d0, d1]}\n")),
            "net.yaml:30:47: networks[0].stages[2].ops[0].inputs[1]: \"d1.block.sum\" is 16x8x8 but \"d0.block.sum\" "
            "is 8x16x16 (channels x spatial); add needs equal shapes (add of (2,8,16,16) and (2,16,8,8))");
}

TEST(NetworkSpecErrors, ChannelsThatDoNotDivide) {
  // out/3 of a slot with 8 output channels.
  std::string text = small_network();
  text.replace(text.find("out_channels: out/2"), 19, "out_channels: out/3");
  EXPECT_EQ(error_of(text),
            "net.yaml:14:47: networks[0].variants[2].ops[0].out_channels: out/3: the slot's out channels 8 are not "
            "divisible by 3 (slot \"d0.block.reduce\" filled by variant \"halved\", 3 -> 8 channels) (in unit "
            "\"down\" instantiated at networks[0].stages[0].ops[0], line 25)");
  // A built-in kind's ratio, per slot.
  std::string odd = small_network();
  odd.replace(odd.find("args: {out: 8, stride: 1}"), 25, "args: {out: 7, stride: 1}");
  EXPECT_EQ(error_of(odd),
            "net.yaml:20:52: networks[0].units.down.ops[0].out_channels: out_channels 7 is not divisible by ratio 2; "
            "the middle width is out_channels / ratio (slot \"d0.block.reduce\" filled by variant \"bottleneck\", 3 "
            "-> 7 channels) (in unit \"down\" instantiated at networks[0].stages[0].ops[0], line 25)");
}

TEST(NetworkSpecErrors, UnknownUnitMissingAndUnknownArguments) {
  std::string unknown = small_network();
  unknown.replace(unknown.find("{unit: down, name: block, args: {out: 16"), 11, "{unit: dwn");
  EXPECT_EQ(error_of(unknown),
            "net.yaml:27:22: networks[0].stages[1].ops[0].unit: unknown unit \"dwn\" (units: down) (did you mean "
            "\"down\"?)");
  std::string missing = small_network();
  missing.replace(missing.find("args: {out: 16, convs: 2}"), 25, "args: {convs: 2}");
  EXPECT_EQ(error_of(missing),
            "net.yaml:27:47: networks[0].stages[1].ops[0].args.out: missing required field \"out\" (a required "
            "parameter of unit \"down\")");
  std::string extra = small_network();
  extra.replace(extra.find("args: {out: 16, convs: 2}"), 25, "args: {out: 16, conv: 2}");
  EXPECT_EQ(error_of(extra),
            "net.yaml:27:57: networks[0].stages[1].ops[0].args.conv: unknown argument \"conv\" for unit \"down\" "
            "(params: out, convs or stride) (did you mean \"convs\"?)");
}

TEST(NetworkSpecErrors, UnknownParameterInATemplate) {
  std::string text = small_network();
  text.replace(text.find("repeat: $convs"), 14, "repeat: $conv");
  EXPECT_EQ(error_of(text),
            "net.yaml:21:45: networks[0].units.down.ops[1].repeat: unknown parameter \"$conv\" (this unit's params: "
            "convs, out or stride) (did you mean \"convs\"?) (in unit \"down\" instantiated at "
            "networks[0].stages[0].ops[0], line 25)");
}

TEST(NetworkSpecErrors, RepeatZeroInAStage) {
  EXPECT_EQ(error_of(small_network("      - name: up\n"
                                   "        ops: [{op: slot, name: c, repeat: 0}]\n")),
            "net.yaml:29:43: networks[0].stages[2].ops[0].repeat: must be positive, got 0");
}

TEST(NetworkSpecErrors, FillsClassThatNoSlotHas) {
  EXPECT_EQ(error_of(small_network("", "      - {kind: grouped, groups: 2, fills: [spatail]}\n")),
            "net.yaml:16:44: networks[0].variants[3].fills[0]: no slot of the network has class \"spatail\" (slot "
            "classes: conv or spatial)");
}

TEST(NetworkSpecErrors, ReferenceToALaterStageOrAnUnknownValue) {
  std::string later = small_network();
  later.replace(later.find("name: block, args: {out: 16, convs: 2}}"), 39,
                "name: block, inputs: up, args: {out: 16, convs: 2}}");
  EXPECT_EQ(error_of(later),
            "net.yaml:27:49: networks[0].stages[1].ops[0].inputs: \"up\" is a later stage (stages[2]); an entry can "
            "read only earlier stages' outputs");
  EXPECT_EQ(error_of(small_network("      - name: up\n"
                                   "        ops: [{op: relu, name: r, inputs: dd0}]\n")),
            "net.yaml:29:43: networks[0].stages[2].ops[0].inputs: unknown value \"dd0\" (known here: input, d0 or d1) "
            "(did you mean \"d0\"?)");
}

TEST(NetworkSpecErrors, GroupedVariantThatDoesNotFitASlot) {
  EXPECT_EQ(error_of(small_network("", "      - {kind: grouped, groups: 2}\n")),
            "net.yaml:21:52: networks[0].units.down.ops[0].out_channels: in_channels 3 is not divisible by groups 2 "
            "(slot \"d0.block.reduce\" filled by variant \"grouped\", 3 -> 8 channels) (in unit \"down\" "
            "instantiated at networks[0].stages[0].ops[0], line 26)");
}

TEST(NetworkSpecErrors, SweepOfAFieldNetworksDoNotHave) {
  SpecLimits limits;
  limits.sweep_overrides = {{"out_channels", "8,16"}};
  try {
    parse_spec_text(small_network(), "net.yaml", limits);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "command line: --sweep: \"out_channels\" is not a field a network has (a network's slots and units say "
              "it); it cannot be swept in a spec with networks");
  }
}

TEST(NetworkSpecErrors, DuplicateNamesAndMissingStages) {
  EXPECT_EQ(error_of("blocks: [{name: net, batch: 1, in_channels: 1, out_channels: 1, size: 4, variants: [standard]}]\n"
                     "networks: [{name: net, batch: 1, in_channels: 1, size: 4, variants: [standard], stages: []}]\n"),
            "net.yaml:2:19: networks[0].name: duplicate name \"net\" (blocks[0] has it too)");
  EXPECT_EQ(error_of("networks: [{name: n, batch: 1, in_channels: 1, size: 4, variants: [standard], stages: []}]\n"),
            "net.yaml:1:87: networks[0].stages: the list of stages is empty");
  EXPECT_EQ(error_of("networks: [{name: n, batch: 1, in_channels: 1, size: 4, variants: [standard]}]\n"),
            "net.yaml:1:12: networks[0].stages: missing required field \"stages\" (the network's stages, in order)");
}

// ---- size: building stays linear, and the expanded ops are bounded -----------------------------

// A chain of `slots` conv-norm-act slots, `per_entry` to a stage entry (repeat).
std::string deep_network(int64_t slots, int64_t per_entry, const std::string& policy = "none") {
  std::string text =
      "networks:\n"
      "  - name: deep\n"
      "    dims: 2\n"
      "    batch: 1\n"
      "    in_channels: 4\n"
      "    size: 4\n"
      "    act: leaky_relu\n"
      "    memory_policy: " +
      policy +
      "\n"
      "    variants: [standard]\n"
      "    stages:\n";
  for (int64_t done = 0, stage = 0; done < slots; done += per_entry, ++stage)
    text += "      - name: s" + std::to_string(stage) +
            "\n        ops: [{op: slot, name: convs, repeat: " + std::to_string(std::min(per_entry, slots - done)) +
            "}]\n";
  return text;
}

// 20,000 slots (60,000 ops) in each memory policy: every op once and named once, the parameters
// and FLOPs 20,000 times one slot's, every activation in place where the policy asks. The steps
// that were quadratic in the ops (the duplicate name scan, the in-place decisions, one table per
// recompute segment, one erase per fused activation) made this take minutes; no time is measured
// here (scripts/bench-network-size.py measures it), only that the result is right at this size.
TEST(NetworkSize, TwentyThousandSlotsExpandAndAnalyseInEveryPolicy) {
  constexpr int64_t kSlots = 20'000;
  for (const char* policy : {"none", "inplace_act", "inplace_abn", "recompute"}) {
    SCOPED_TRACE(policy);
    const Spec spec = parse(deep_network(kSlots, 10'000, policy));
    const BlockSpec& net = spec.blocks.at(0);
    const Graph g = build_variant_graph(net, net.variants.at(0));
    const bool fused = std::string(policy) == "inplace_abn";
    ASSERT_EQ(static_cast<int64_t>(g.ops.size()), kSlots * (fused ? 2 : 3));
    std::set<std::string> names;
    for (const Op& op : g.ops) names.insert(op.name);
    EXPECT_EQ(names.size(), g.ops.size());
    EXPECT_TRUE(has_op(g, "s1.convs.9999.conv"));
    const VariantAnalysis a = analyze_variant(g, true);
    const Spec one = parse(deep_network(1, 1, policy));
    const VariantAnalysis a1 =
        analyze_variant(build_variant_graph(one.blocks.at(0), one.blocks.at(0).variants.at(0)), true);
    EXPECT_EQ(a.params, kSlots * a1.params);
    EXPECT_EQ(a.flops.forward, kSlots * a1.flops.forward);
    const int64_t in_place = std::count_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.in_place; });
    // Every activation (or fused norm) reads a value nothing else reads or saves: all run in place.
    const bool in_place_policy = std::string(policy) == "inplace_act" || fused;
    EXPECT_EQ(in_place, in_place_policy ? kSlots : 0);
    EXPECT_EQ(static_cast<int64_t>(g.segments.size()), std::string(policy) == "recompute" ? kSlots : 0);
    EXPECT_GT(a.memory.peak_bytes, 0);
  }
}

TEST(NetworkSize, MoreOpsThanTheLimitIsALocatedError) {
  SpecLimits limits;
  limits.max_network_ops = 100;
  const std::string text = deep_network(40, 40);  // 120 ops
  const Spec spec = parse_spec_text(text, "deep.yaml", limits);
  try {
    build_variant_graph(spec.blocks.at(0), spec.blocks.at(0).variants.at(0));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "deep.yaml:12:15: networks[0].stages[0].ops[0]: variant \"standard\" expands the network to more "
              "than 100 ops (102 with this entry; check the `repeat` values, or raise the limit with "
              "--max-network-ops)");
  }
  // The default admits it, and a limit at the network's size too.
  EXPECT_EQ(error_of(text), "(no error)");
  limits.max_network_ops = 120;
  const Spec exact = parse_spec_text(text, "deep.yaml", limits);
  EXPECT_EQ(build_variant_graph(exact.blocks.at(0), exact.blocks.at(0).variants.at(0)).ops.size(), 120u);
}

TEST(NetworkSize, UnitsThatExpandToNothingStillCountTheirEntries) {
  // Each instance of `nothing` skips its only entry: no ops, yet 10,000 x 10,000 instances would
  // never end. The entries are bounded by the same limit.
  SpecLimits limits;
  limits.max_network_ops = 1000;
  const std::string text =
      "networks:\n"
      "  - name: hollow\n"
      "    batch: 1\n"
      "    in_channels: 4\n"
      "    size: 4\n"
      "    variants: [standard]\n"
      "    units:\n"
      "      nothing:\n"
      "        params: {n: 0}\n"
      "        ops: [{op: slot, name: c, repeat: $n}]\n"
      "      many:\n"
      "        ops: [{unit: nothing, name: x, repeat: 10000}]\n"
      "    stages:\n"
      "      - name: s\n"
      "        ops:\n"
      "          - {unit: many, name: m, repeat: 10000}\n"
      "          - {op: slot, name: last}\n";
  const Spec spec = parse_spec_text(text, "hollow.yaml", limits);
  try {
    build_variant_graph(spec.blocks.at(0), spec.blocks.at(0).variants.at(0));
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("networks[0].units.many.ops[0]: variant \"standard\" expands the network to more than 1000 "
                        "entries (each repeat and unit instance counted"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace convbench

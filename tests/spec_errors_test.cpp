// Every class of bad spec input: a InputError whose what() is "file:line:col: key.path: message",
// pointing at the offending key or value. Positions here were counted by hand from the text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "shipped_configs.hpp"
#include "spec/spec_loader.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

const std::string kSpecs = std::string(CONVBENCH_SOURCE_DIR) + "/tests/data/specs/";

std::string error_of(const std::string& text, const std::string& file = "bad.yaml") {
  try {
    parse_spec_text(text, file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The first error of parsing the spec and building every variant's graph (where what a variant's
// memory policy cannot apply to is found), or "(no error)".
std::string build_error_of(const std::string& text, const std::string& file = "bad.yaml") {
  try {
    const Spec spec = parse_spec_text(text, file);
    for (const BlockSpec& b : spec.blocks)
      for (const VariantSpec& v : b.variants) build_variant_graph(b, v);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string file_error_of(const std::string& name) {
  try {
    load_spec_file(kSpecs + name);
  } catch (const InputError& e) {
    const std::string what = e.what();
    // Drop the directory so that expectations do not depend on where the tree is checked out.
    return what.rfind(kSpecs, 0) == 0 ? what.substr(kSpecs.size()) : what;
  }
  return "(no error)";
}

// Line 1 gives every required field, so each test adds only what it is about; blocks start on
// line 3, and a block's first key sits at column 5.
const std::string kHead =
    "defaults: {batch: 2, in_channels: 8, out_channels: 16, size: 8, variants: [standard]}\n"
    "blocks:\n";

// ---- unknown keys -----------------------------------------------------------------------------

TEST(SpecErrors, UnknownBlockKeySuggestsTheNearestKey) {
  EXPECT_EQ(file_error_of("bad_unknown_key.yaml"),
            "bad_unknown_key.yaml:5:5: blocks[0].in_channel: unknown key \"in_channel\" (did you "
            "mean \"in_channels\"?)");
}

TEST(SpecErrors, UnknownTopLevelKeys) {
  EXPECT_EQ(error_of("blokcs: []\n"), "bad.yaml:1:1: blokcs: unknown key \"blokcs\" (did you mean \"blocks\"?)");
  EXPECT_EQ(error_of("name: x\nzzz: 1\n"),
            "bad.yaml:2:1: zzz: unknown key \"zzz\" (valid keys: name, defaults, blocks, networks or sweep)");
}

TEST(SpecErrors, UnknownKeyInDefaults) {
  EXPECT_EQ(error_of("defaults: {kernal: 3}\nblocks: []\n"),
            "bad.yaml:1:12: defaults.kernal: unknown key \"kernal\" (did you mean \"kernel\"?)");
}

TEST(SpecErrors, VariantParameterOfAnotherKind) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: separable, ratio: 2}]\n"),
            "bad.yaml:4:34: blocks[0].variants[0].ratio: unknown key \"ratio\" for a separable "
            "variant (valid keys: kind, name, multiplier, memory_policy or precision)");
}

TEST(SpecErrors, MisspeltVariantKindKey) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{knd: grouped, groups: 2}]\n"),
            "bad.yaml:4:17: blocks[0].variants[0].knd: unknown key \"knd\" in a variant (did you "
            "mean \"kind\"?)");
}

TEST(SpecErrors, OpFieldsThatDoNotBelongToTheOp) {
  const std::string custom = kHead + "  - name: b\n    variants:\n      - kind: custom\n        ops:\n";
  // ops start on line 7, "- {" puts the op map at column 11
  EXPECT_EQ(error_of(custom + "          - {op: relu, name: r, kernel: 3}\n"),
            "bad.yaml:7:33: blocks[0].variants[0].ops[0].kernel: unknown key \"kernel\" for a "
            "relu op (valid keys: op, name or inputs)");
  EXPECT_EQ(error_of(custom + "          - {op: conv, name: c, kernal: 3}\n"),
            "bad.yaml:7:33: blocks[0].variants[0].ops[0].kernal: unknown key \"kernal\" for a "
            "conv op (did you mean \"kernel\"?)");
  EXPECT_EQ(
      error_of(custom + "          - {op: convv, name: c}\n"),
      "bad.yaml:7:18: blocks[0].variants[0].ops[0].op: unknown op \"convv\" (expected conv, conv_transpose, linear, "
      "batch_norm, group_norm, batch_norm_act, relu, leaky_relu, sigmoid, dropout, channel_dropout, add, sub, "
      "concat, max_pool, "
      "avg_pool, global_avg_pool, upsample, convert_layout, mul, slice, space_to_depth, depth_to_space, silu, "
      "hardswish, hardsigmoid, relu6, gelu, drop_path, layer_norm, layer_scale or channel_shuffle) (did you "
      "mean "
      "\"conv\"?)");
}

TEST(SpecErrors, YamlMergeKeysAreExplained) {
  EXPECT_EQ(error_of(kHead + "  - <<: {batch: 1}\n"),
            "bad.yaml:3:5: blocks[0].<<: unknown key \"<<\" (YAML merge keys are not supported; "
            "use `defaults` or repeat the fields)");
}

// ---- wrong types ------------------------------------------------------------------------------

TEST(SpecErrors, StringWhereANumberIsExpected) {
  EXPECT_EQ(error_of("{\"blocks\": [{\"name\": \"b\", \"batch\": \"2\"}]}", "bad.json"),
            "bad.json:1:36: blocks[0].batch: expected an integer, got the string \"2\"");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    dropout: \"0.1\"\n"),
            "bad.yaml:4:14: blocks[0].dropout: expected a number, got the string \"0.1\"");
}

TEST(SpecErrors, FloatWhereAnIntegerIsExpected) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    kernel: 3.0\n"),
            "bad.yaml:4:13: blocks[0].kernel: expected an integer or a list of 2 integers, got "
            "the number 3.0");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    in_channels: 3.5\n"),
            "bad.yaml:4:18: blocks[0].in_channels: expected an integer, got the number 3.5");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    kernel: [3, 1e2]\n"),
            "bad.yaml:4:17: blocks[0].kernel[1]: expected an integer, got the number 1e2");
}

TEST(SpecErrors, ListsOfTheWrongLength) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    size: [8, 8, 8]\n"),
            "bad.yaml:4:11: blocks[0].size: expected 2 integers (one per spatial dim), got a "
            "list of 3");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    dims: 3\n    stride: [1, 2]\n"),
            "bad.yaml:5:13: blocks[0].stride: expected 3 integers (one per spatial dim), got a "
            "list of 2");
}

TEST(SpecErrors, BooleansAreOnlyTrueAndFalse) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    bias: yes\n"),
            "bad.yaml:4:11: blocks[0].bias: expected true or false, got the string \"yes\"");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    residual: 1\n"),
            "bad.yaml:4:15: blocks[0].residual: expected true or false, got the integer 1");
}

TEST(SpecErrors, EnumValuesAndVariantKinds) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    norm: layer\n"),
            "bad.yaml:4:11: blocks[0].norm: unknown norm \"layer\" (expected batch, group or "
            "none)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    dtype: fp16\n"),
            "bad.yaml:4:12: blocks[0].dtype: unknown dtype \"fp16\" (expected float32, tf32, "
            "float16 or bfloat16)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    layout: channel_last\n"),
            "bad.yaml:4:13: blocks[0].layout: unknown layout \"channel_last\" (expected "
            "channels_first or channels_last) (did you mean \"channels_last\"?)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [seperable]\n"),
            "bad.yaml:4:16: blocks[0].variants[0]: unknown variant kind \"seperable\" (expected "
            "standard, bottleneck, separable, grouped, custom, folded, branches, repvgg, inverted_residual, mbconv, "
            "fused_mbconv, convnext, shufflenet_unit, densenet_layer or onnx) (did you mean "
            "\"separable\"?)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: standard\n"),
            "bad.yaml:4:15: blocks[0].variants: expected a list of variants, got the string "
            "\"standard\"");
}

// ---- folded and branches variants ---------------------------------------------------------------

TEST(SpecErrors, FoldedVariantNamesAnUnfoldedVariantOfItsBlock) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [standard, {kind: folded, of: standrd}]\n"),
            "bad.yaml:4:45: blocks[0].variants[1].of: no variant of this block is named \"standrd\" (did you mean "
            "\"standard\"?) (the variants it may fold: standard)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [standard, {kind: folded, name: f, of: f}]\n"),
            "bad.yaml:4:54: blocks[0].variants[1].of: a folded variant cannot fold itself; name another variant of "
            "the block");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    mode: infer\n    variants: [standard, {kind: folded, of: standard},"
                             " {kind: folded, of: folded-standard}]\n"),
            "bad.yaml:5:75: blocks[0].variants[2].of: \"folded-standard\" is itself folded; fold its source, "
            "\"standard\", instead");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [standard, {kind: folded}]\n"),
            "bad.yaml:4:26: blocks[0].variants[1].of: missing required field \"of\" (the name of the variant of this "
            "block to fold)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [folded]\n"),
            "bad.yaml:4:16: blocks[0].variants[0].of: missing required field \"of\" (write the variant as {kind: "
            "folded, of: VARIANT})");
}

TEST(SpecErrors, FoldOnceIsRefusedInATrainBlock) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [standard, {kind: folded, of: standard, fold: once}]\n"),
            "bad.yaml:4:61: blocks[0].variants[1].fold: fold: once computes the kernel once, when the graph is "
            "built: a kernel computed once cannot be trained as its source's weights are (use fold: online, which "
            "computes it from them in every step, or mode: infer)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [standard, {kind: folded, of: standard, fold: twice}]\n"),
            "bad.yaml:4:61: blocks[0].variants[1].fold: unknown fold \"twice\" (expected once or online)");
}

TEST(SpecErrors, BranchesMustSplitTheChannels) {
  // kHead: in_channels 8, out_channels 16.
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: branches, count: 3}]\n"),
            "bad.yaml:4:40: blocks[0].variants[0].count: split: channels gives each branch in_channels / count "
            "channels: in_channels 8 is not divisible by count 3 (or use split: none)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: branches, count: 3, split: none}]\n"),
            "bad.yaml:4:40: blocks[0].variants[0].count: the block's out_channels 16 is not divisible by count 3 "
            "(each branch gives out_channels / count)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: branches, count: 4, out_channels: 5}]\n"),
            "bad.yaml:4:57: blocks[0].variants[0].out_channels: count 4 branches of 5 channels give 20, the block's "
            "out_channels is 16");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: branches, count: 1}]\n"),
            "bad.yaml:4:40: blocks[0].variants[0].count: must be at least 2, got 1");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [branches]\n"),
            "bad.yaml:4:16: blocks[0].variants[0].count: missing required field \"count\" (write the variant as "
            "{kind: branches, count: N})");
}

TEST(SpecErrors, RepvggNeedsItsConvsToAlign) {
  // kHead: kernel 3. Padding 0 shrinks the 3x3 conv's output, not the 1x1's.
  EXPECT_EQ(error_of(kHead + "  - name: b\n    padding: 0\n    variants: [standard, repvgg]\n"),
            "bad.yaml:5:26: blocks[0].variants[1]: repvgg adds a 1x1 conv to the block's conv, which needs an odd "
            "kernel and padding \"same\" (dilation x (kernel - 1) / 2) for their outputs to align; the block has "
            "kernel 3x3, padding 0x0, dilation 1x1");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    kernel: 4\n    variants: [{kind: repvgg, name: r}]\n"),
            "bad.yaml:5:16: blocks[0].variants[0]: repvgg adds a 1x1 conv to the block's conv, which needs an odd "
            "kernel and padding \"same\" (dilation x (kernel - 1) / 2) for their outputs to align; the block has "
            "kernel 4x4, padding 1x1, dilation 1x1");
}

// ---- missing required fields --------------------------------------------------------------------

TEST(SpecErrors, MissingRequiredFieldPointsAtTheMapThatLacksIt) {
  EXPECT_EQ(error_of("blocks:\n  - name: b\n    batch: 2\n"),
            "bad.yaml:2:5: blocks[0].in_channels: missing required field \"in_channels\" (set it "
            "in the block or in `defaults`)");
  EXPECT_EQ(error_of("name: nothing\n"),
            "bad.yaml:1:1: blocks: missing required field \"blocks\" (the list of blocks to "
            "compare; or `networks`, the networks to compare)");
  EXPECT_EQ(error_of("blocks:\n  - batch: 2\n"),
            "bad.yaml:2:5: blocks[0].name: missing required field \"name\" (every block needs a "
            "unique name)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [standard, grouped]\n"),
            "bad.yaml:4:26: blocks[0].variants[1].groups: missing required field \"groups\" "
            "(write the variant as {kind: grouped, groups: N})");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: custom, ops: [{op: relu}]}]\n"),
            "bad.yaml:4:37: blocks[0].variants[0].ops[0].name: missing required field \"name\" "
            "(the name later ops and `output` use)");
  EXPECT_EQ(
      error_of(kHead + "  - name: b\n    variants: [{kind: custom, ops: [{name: x}]}]\n"),
      "bad.yaml:4:37: blocks[0].variants[0].ops[0].op: missing required field \"op\" (one of conv, conv_transpose, "
      "linear, batch_norm, group_norm, batch_norm_act, relu, leaky_relu, sigmoid, dropout, channel_dropout, add, sub, "
      "concat, "
      "max_pool, avg_pool, global_avg_pool, upsample, convert_layout, mul, slice, space_to_depth, depth_to_space, "
      "silu, hardswish, hardsigmoid, relu6, gelu, drop_path, layer_norm, layer_scale or channel_shuffle)");
}

// ---- channels and groups ----------------------------------------------------------------------

TEST(SpecErrors, GroupedChannelsMustDivide) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: grouped, groups: 3}]\n"),
            "bad.yaml:4:40: blocks[0].variants[0].groups: in_channels 8 is not divisible by "
            "groups 3");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    out_channels: 12\n    variants: [{kind: grouped, "
                             "groups: 8}]\n"),
            "bad.yaml:5:40: blocks[0].variants[0].groups: out_channels 12 is not divisible by "
            "groups 8");
}

TEST(SpecErrors, BottleneckWidthsMustDivide) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: bottleneck, ratio: 3}]\n"),
            "bad.yaml:4:42: blocks[0].variants[0].ratio: out_channels 16 is not divisible by "
            "ratio 3; the middle width is out_channels / ratio");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    out_channels: 6\n    variants: [bottleneck]\n"),
            "bad.yaml:5:16: blocks[0].variants[0].ratio: out_channels 6 is not divisible by "
            "ratio 4 (the default); the middle width is out_channels / ratio");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: bottleneck, ratio: 2, groups: "
                             "3}]\n"),
            "bad.yaml:4:53: blocks[0].variants[0].groups: the middle width 8 (out_channels 16 / "
            "ratio 2) is not divisible by groups 3");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: bottleneck, ratio: 32}]\n"),
            "bad.yaml:4:42: blocks[0].variants[0].ratio: out_channels 16 is not divisible by "
            "ratio 32; the middle width is out_channels / ratio");
}

TEST(SpecErrors, GroupNormChannelsMustDivide) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    norm: group\n    norm_groups: 5\n"),
            "bad.yaml:5:18: blocks[0].norm_groups: group norm needs out_channels 16 divisible by "
            "norm_groups 5");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    out_channels: 8\n    norm: group\n"),
            "bad.yaml:5:11: blocks[0].norm: group norm needs out_channels 8 divisible by "
            "norm_groups 16 (the default; set norm_groups)");
}

TEST(SpecErrors, CustomConvGroupsMustDivide) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: custom, ops: [{op: conv, name: "
                             "c, groups: 3}]}]\n"),
            "bad.yaml:4:65: blocks[0].variants[0].ops[0].groups: the input's 8 channels are not "
            "divisible by groups 3");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: custom, ops: [{op: conv, name: "
                             "c, groups: depthwise, out_channels: 12}]}]\n"),
            "bad.yaml:4:90: blocks[0].variants[0].ops[0].out_channels: out_channels 12 is not "
            "divisible by groups 8");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: custom, ops: [{op: conv, name: "
                             "c, groups: all}]}]\n"),
            "bad.yaml:4:65: blocks[0].variants[0].ops[0].groups: expected a positive integer or "
            "\"depthwise\", got the string \"all\"");
}

// ---- ranges -----------------------------------------------------------------------------------

TEST(SpecErrors, NonPositiveSizesAndNegativePadding) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    batch: 0\n"), "bad.yaml:4:12: blocks[0].batch: must be positive, got 0");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    kernel: [3, 0]\n"),
            "bad.yaml:4:17: blocks[0].kernel[1]: must be positive, got 0");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    stride: -1\n"),
            "bad.yaml:4:13: blocks[0].stride: must be positive, got -1");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    dilation: 0\n"),
            "bad.yaml:4:15: blocks[0].dilation: must be positive, got 0");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    padding: [1, -1]\n"),
            "bad.yaml:4:18: blocks[0].padding[1]: must not be negative, got -1");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    padding: valid\n"),
            "bad.yaml:4:14: blocks[0].padding: expected \"same\", an integer or a list of 2 "
            "integers, got the string \"valid\"");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    size: [8, 0]\n"),
            "bad.yaml:4:15: blocks[0].size[1]: must be positive, got 0");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    dims: 4\n"),
            "bad.yaml:4:11: blocks[0].dims: dims must be 2 or 3, got 4");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    dropout: 1.0\n"),
            "bad.yaml:4:14: blocks[0].dropout: dropout must be in [0, 1), got 1.0");
}

TEST(SpecErrors, KernelLargerThanThePaddedInput) {
  EXPECT_EQ(file_error_of("bad_kernel.json"),
            "bad_kernel.json:4:16: blocks[0].kernel: kernel 5 spans 5 in dim 0, more than the "
            "padded input 4 (size 4 + 2 x padding 0)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    size: [8, 3]\n    kernel: 3\n    dilation: [1, "
                             "2]\n    padding: 0\n"),
            "bad.yaml:5:13: blocks[0].kernel: kernel 3 with dilation 2 spans 5 in dim 1, more "
            "than the padded input 3 (size 3 + 2 x padding 0)");
}

TEST(SpecErrors, ValuesFromDefaultsNameTheBlockTheyFailFor) {
  EXPECT_EQ(error_of("defaults: {batch: 1, in_channels: 4, out_channels: 4, size: 8, kernel: 9, "
                     "padding: 0, variants: [standard]}\nblocks:\n  - name: ok\n    size: 9\n  - "
                     "name: small\n"),
            "bad.yaml:1:72: defaults.kernel: kernel 9 spans 9 in dim 0, more than the padded "
            "input 8 (size 8 + 2 x padding 0) (for block \"small\")");
  // A missing kernel cannot be blamed on a value: the block is at fault.
  EXPECT_EQ(error_of(kHead + "  - name: tiny\n    size: 2\n    padding: 0\n"),
            "bad.yaml:3:5: blocks[0].kernel: kernel 3 spans 3 in dim 0, more than the padded "
            "input 2 (size 2 + 2 x padding 0)");
  EXPECT_EQ(error_of("defaults: {batch: 1, in_channels: 4, out_channels: 4, size: 8, kernel: [3, "
                     "3], variants: [standard]}\nblocks:\n  - name: v\n    dims: 3\n"),
            "bad.yaml:1:72: defaults.kernel: expected 3 integers (one per spatial dim), got a "
            "list of 2 (for block \"v\")");
}

TEST(SpecErrors, ValuesThatCouldOverflow) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    batch: 2147483649\n"),
            "bad.yaml:4:12: blocks[0].batch: the integer 2147483649 is too large (at most "
            "2147483648 = 2^31)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    batch: 99999999999999999999\n"),
            "bad.yaml:4:12: blocks[0].batch: the integer 99999999999999999999 is out of range "
            "(at most 2147483648)");
  // Each dimension is allowed, but 2^31 * 2^31 * 2^31 * 2^31 elements overflow int64.
  EXPECT_EQ(error_of("blocks:\n  - {name: huge, batch: 2147483648, in_channels: 2147483648, "
                     "out_channels: 1, size: [2147483648, 2147483648], kernel: 1, variants: "
                     "[standard]}\n"),
            "bad.yaml:2:5: blocks[0]: the block's input tensor "
            "2147483648x2147483648x2147483648x2147483648 has more elements than int64 can count");
  EXPECT_EQ(error_of("blocks:\n  - {name: up, batch: 1, in_channels: 1, out_channels: 1, size: "
                     "65536, kernel: 1, variants: [{kind: custom, ops: [{op: upsample, name: u, "
                     "scale: 65536}]}]}\n"),
            "bad.yaml:2:146: blocks[0].variants[0].ops[0].scale: the upsampled size 4294967296 "
            "is larger than 2^31");
}

// The fields of upsample's linear mode and of linear, where they are written.
TEST(SpecErrors, UpsampleModeAndLinearFields) {
  auto custom = [](const std::string& ops) {
    return kHead + "  - name: b\n    variants: [{kind: custom, ops: " + ops + "}]\n";
  };
  EXPECT_EQ(error_of(custom("[{op: upsample, name: u, align_corners: true}]")),
            "bad.yaml:4:76: blocks[0].variants[0].ops[0].align_corners: align_corners needs mode linear "
            "(nearest upsampling has no corners to align)");
  EXPECT_EQ(error_of(custom("[{op: upsample, name: u, mode: linear, scale: 2, size: 4}]")),
            "bad.yaml:4:91: blocks[0].variants[0].ops[0].size: give either scale or size, not both");
  EXPECT_EQ(error_of(custom("[{op: upsample, name: u, size: 4}]")),
            "bad.yaml:4:67: blocks[0].variants[0].ops[0].size: size needs mode linear (nearest upsampling "
            "takes an integer scale)");
  EXPECT_EQ(error_of(custom("[{op: upsample, name: u, mode: bilinear}]")),
            "bad.yaml:4:67: blocks[0].variants[0].ops[0].mode: unknown mode \"bilinear\" (expected nearest or "
            "linear) (did you mean \"linear\"?)");
  EXPECT_EQ(error_of(custom("[{op: linear, name: l}]")),
            "bad.yaml:4:37: blocks[0].variants[0].ops[0].out_features: linear needs out_features (the number "
            "of outputs), a positive integer");
  EXPECT_EQ(error_of(custom("[{op: linear, name: l, out_features: 16}]")),
            "bad.yaml:4:37: blocks[0].variants[0].ops[0].inputs: linear needs an input of spatial size 1, got "
            "8x8x8 (channels x spatial); put a global_avg_pool before it");
}

// ---- names and lists --------------------------------------------------------------------------

TEST(SpecErrors, MemoryPolicies) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    memory_policy: recompte\n"),
            "bad.yaml:4:20: blocks[0].memory_policy: unknown memory policy \"recompte\" (expected none, recompute, "
            "inplace_abn or inplace_act) (did you mean \"recompute\"?)");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: standard, memory_policy: 1}]\n"),
            "bad.yaml:4:48: blocks[0].variants[0].memory_policy: expected none, recompute, inplace_abn or "
            "inplace_act, got the integer 1");
  // What a policy cannot apply to is refused where the policy was given: in inference there is no
  // backward to recompute for; inplace_act needs an activation.
  EXPECT_EQ(build_error_of(kHead + "  - name: b\n    mode: infer\n    memory_policy: recompute\n"),
            "bad.yaml:5:20: blocks[0].memory_policy: memory_policy recompute runs the forward again in backward, and "
            "mode: infer has no backward (nothing is saved to recompute); use memory_policy: none, or mode: train "
            "(for variant \"standard\")");
  EXPECT_EQ(build_error_of(kHead + "  - name: b\n    act: none\n    variants: [{kind: standard, memory_policy: "
                                   "inplace_act}]\n"),
            "bad.yaml:5:48: blocks[0].variants[0].memory_policy: memory_policy inplace_act: the variant has no "
            "activation (relu, leaky_relu, sigmoid, silu, hardswish, hardsigmoid, relu6, gelu)");
  EXPECT_EQ(
      build_error_of(kHead + "  - name: b\n    norm: group\n    act: leaky_relu\n    memory_policy: "
                             "inplace_abn\n"),
      "bad.yaml:6:20: blocks[0].memory_policy: memory_policy inplace_abn: the variant has no batch_norm followed "
      "by leaky_relu or relu to fuse (Inplace-ABN fuses batch norm; this variant's norm is group norm) (for variant "
      "\"standard\")");
  EXPECT_EQ(build_error_of(kHead + "  - name: b\n    act: leaky_relu\n    negative_slope: -0.5\n    "
                                   "variants: [{kind: standard, memory_policy: inplace_abn}]\n"),
            "bad.yaml:6:48: blocks[0].variants[0].memory_policy: memory_policy inplace_abn: act has negative_slope "
            "-0.5; Inplace-ABN recovers the activation's input by dividing its negative outputs by the slope, which "
            "must be positive");
  EXPECT_EQ(build_error_of(kHead + "  - name: b\n    act: leaky_relu\n    memory_policy: inplace_abn\n"), "(no error)");
  // A swept policy is refused at the sweep's value, for the block and point it failed for.
  EXPECT_EQ(build_error_of("sweep: {memory_policy: [none, recompute]}\n" + kHead + "  - name: b\n    mode: infer\n"),
            "bad.yaml:1:31: sweep.memory_policy[1]: memory_policy recompute runs the forward again in backward, and "
            "mode: infer has no backward (nothing is saved to recompute); use memory_policy: none, or mode: train "
            "(for variant \"standard\", block \"b\", sweep point memory_policy=recompute)");
}

TEST(SpecErrors, DuplicateBlockNames) {
  EXPECT_EQ(error_of(kHead + "  - name: a\n  - name: b\n  - name: a\n"),
            "bad.yaml:5:11: blocks[2].name: duplicate block name \"a\" (blocks[0] has it too)");
}

TEST(SpecErrors, DuplicateVariantNames) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [bottleneck, {kind: bottleneck, ratio: "
                             "2}]\n"),
            "bad.yaml:4:28: blocks[0].variants[1]: duplicate variant name \"bottleneck\" "
            "(variants[0] has it too); give each variant its own `name:`");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: standard, name: x}, {kind: "
                             "separable, name: x}]\n"),
            "bad.yaml:4:67: blocks[0].variants[1].name: duplicate variant name \"x\" "
            "(variants[0] has it too); give each variant its own `name:`");
}

TEST(SpecErrors, EmptyLists) {
  EXPECT_EQ(error_of("blocks: []\n"), "bad.yaml:1:9: blocks: the list of blocks is empty");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: []\n"),
            "bad.yaml:4:15: blocks[0].variants: the list of variants is empty");
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: custom, ops: []}]\n"),
            "bad.yaml:4:36: blocks[0].variants[0].ops: the list of ops is empty");
}

TEST(SpecErrors, BaselineMustNameAVariant) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [standard, separable]\n    baseline: "
                             "standart\n"),
            "bad.yaml:5:15: blocks[0].baseline: baseline \"standart\" is not a variant of this "
            "block (variants: standard or separable) (did you mean \"standard\"?)");
}

// ---- custom op graphs -------------------------------------------------------------------------

TEST(SpecErrors, UnknownValueNamesAreReportedAtTheInputsEntry) {
  EXPECT_EQ(file_error_of("bad_custom_inputs.yaml"),
            "bad_custom_inputs.yaml:15:25: blocks[0].variants[1].ops[1].inputs[1]: unknown value "
            "\"q\" (known here: input or p)");
  const std::string custom = kHead + "  - name: b\n    variants:\n      - kind: custom\n        ops:\n";
  EXPECT_EQ(error_of(custom + "          - {op: relu, name: r, inputs: [later]}\n"
                              "          - {op: relu, name: later}\n"),
            "bad.yaml:7:42: blocks[0].variants[0].ops[0].inputs[0]: \"later\" is defined later, "
            "by ops[1]; an op can only use \"input\" and earlier ops");
  EXPECT_EQ(error_of(custom + "          - {op: relu, name: r, inputs: r}\n"),
            "bad.yaml:7:41: blocks[0].variants[0].ops[0].inputs: \"r\" is this op itself; an op "
            "can only use \"input\" and earlier ops");
  EXPECT_EQ(error_of(custom + "          - {op: relu, name: r1}\n          - {op: relu, name: "
                              "r2, inputs: [rl]}\n"),
            "bad.yaml:8:43: blocks[0].variants[0].ops[1].inputs[0]: unknown value \"rl\" (known "
            "here: input or r1)");
}

TEST(SpecErrors, OpArity) {
  const std::string custom = kHead + "  - name: b\n    variants:\n      - kind: custom\n        ops:\n";
  EXPECT_EQ(error_of(custom + "          - {op: add, name: s, inputs: [input]}\n"),
            "bad.yaml:7:40: blocks[0].variants[0].ops[0].inputs: add takes exactly 2 inputs, got 1");
  EXPECT_EQ(error_of(custom + "          - {op: concat, name: s, inputs: input}\n"),
            "bad.yaml:7:43: blocks[0].variants[0].ops[0].inputs: concat takes at least 2 inputs, "
            "got 1");
  EXPECT_EQ(error_of(custom + "          - {op: relu, name: s, inputs: [input, input]}\n"),
            "bad.yaml:7:41: blocks[0].variants[0].ops[0].inputs: relu takes exactly 1 input, got 2");
  EXPECT_EQ(error_of(custom + "          - {op: sub, name: s}\n"),
            "bad.yaml:7:13: blocks[0].variants[0].ops[0].inputs: missing required field "
            "\"inputs\" (sub takes 2 value names)");
}

TEST(SpecErrors, OpNamesAndOutput) {
  const std::string custom = kHead + "  - name: b\n    variants:\n      - kind: custom\n";
  const std::string ops = "        ops:\n          - {op: conv, name: c, out_channels: 16}\n";
  EXPECT_EQ(error_of(custom + "        ops: [{op: relu, name: input}]\n"),
            "bad.yaml:6:32: blocks[0].variants[0].ops[0].name: \"input\" is the block input; "
            "give this op another name");
  EXPECT_EQ(error_of(custom + ops + "          - {op: relu, name: c}\n"),
            "bad.yaml:8:30: blocks[0].variants[0].ops[1].name: duplicate op name \"c\" in this "
            "variant");
  EXPECT_EQ(error_of(custom + ops + "        output: cc\n"),
            "bad.yaml:8:17: blocks[0].variants[0].output: unknown op \"cc\" (ops: c)");
  EXPECT_EQ(error_of(custom + ops + "        output: input\n"),
            "bad.yaml:8:17: blocks[0].variants[0].output: `output` must name an op; the block "
            "input cannot be the output");
  EXPECT_EQ(error_of(custom + ops +
                     "          - {op: relu, name: dead, inputs: input}\n"
                     "          - {op: relu, name: r, inputs: c}\n"),
            "bad.yaml:8:13: blocks[0].variants[0].ops[1]: the result of \"dead\" never reaches "
            "the variant's output \"r\"; every op must contribute to it");
  EXPECT_EQ(error_of(custom + "        ops: [{op: relu, name: r}]\n"),
            "bad.yaml:6:15: blocks[0].variants[0].ops[0]: the variant's output \"r\" has 8 "
            "channels but the block's out_channels is 16");
}

TEST(SpecErrors, CustomShapesMustAgree) {
  const std::string custom = kHead + "  - name: b\n    variants:\n      - kind: custom\n        ops:\n";
  EXPECT_EQ(error_of(custom + "          - {op: conv, name: c, out_channels: 16}\n"
                              "          - {op: add, name: s, inputs: [c, input]}\n"),
            "bad.yaml:8:44: blocks[0].variants[0].ops[1].inputs[1]: \"input\" is 8x8x8 but \"c\" "
            "is 16x8x8 (channels x spatial); add needs equal shapes");
  EXPECT_EQ(error_of(custom + "          - {op: max_pool, name: m, kernel: 2}\n"
                              "          - {op: concat, name: s, inputs: [input, m]}\n"),
            "bad.yaml:8:51: blocks[0].variants[0].ops[1].inputs[1]: \"m\" is 8x4x4 but \"input\" "
            "is 8x8x8 (channels x spatial); concat needs equal spatial sizes");
  EXPECT_EQ(error_of(custom + "          - {op: conv, name: c, kernel: 11, padding: 1}\n"),
            "bad.yaml:7:41: blocks[0].variants[0].ops[0].kernel: the kernel spans 11 in dim 0 "
            "but the padded input is only 10 (size 8 + 2 x padding 1)");
  EXPECT_EQ(error_of(custom + "          - {op: avg_pool, name: a, kernel: 2, padding: 2}\n"),
            "bad.yaml:7:57: blocks[0].variants[0].ops[0].padding: pool padding 2 is more than "
            "half the kernel 2 in dim 0");
  EXPECT_EQ(error_of(custom + "          - {op: conv_transpose, name: t, stride: 2, "
                              "output_padding: 2}\n"),
            "bad.yaml:7:70: blocks[0].variants[0].ops[0].output_padding: output_padding must be "
            "smaller than stride or dilation, got 2 in dim 0");
  EXPECT_EQ(error_of(custom + "          - {op: dropout, name: d, p: 1}\n"),
            "bad.yaml:7:39: blocks[0].variants[0].ops[0].p: must be in [0, 1), got 1");
}

// ---- syntax and document shape ----------------------------------------------------------------

// mul's second operand, slice's channels, space_to_depth's block and a blur conv's groups are
// checked where the spec states them.
TEST(SpecErrors, MulSliceSpaceToDepthAndBlurFields) {
  // in_channels 8, size 8; the ops start on line 7
  const std::string custom = kHead + "  - name: b\n    variants:\n      - kind: custom\n        ops:\n";
  const std::string pool = "          - {op: avg_pool, name: p, kernel: 4, stride: 4}\n";
  EXPECT_EQ(error_of(custom + pool + "          - {op: mul, name: m, inputs: [input, p]}\n"),
            "bad.yaml:8:48: blocks[0].variants[0].ops[1].inputs[1]: \"p\" is 8x2x2 but \"input\" is 8x8x8 "
            "(channels x spatial); mul needs the second operand of the first's shape or 8x1x1 (one value per "
            "channel, broadcast over space)");
  EXPECT_EQ(error_of(custom + "          - {op: slice, name: s, start: 6, length: 3}\n"),
            "bad.yaml:7:52: blocks[0].variants[0].ops[0].length: channels [6, 9) run past the input's 8 channels "
            "(start 6 + length 3)");
  EXPECT_EQ(error_of(custom + "          - {op: slice, name: s, start: -1, length: 3}\n"),
            "bad.yaml:7:41: blocks[0].variants[0].ops[0].start: must not be negative, got -1");
  EXPECT_EQ(error_of(custom + "          - {op: slice, name: s}\n"),
            "bad.yaml:7:13: blocks[0].variants[0].ops[0].length: length (the number of channels to take, >= 1) "
            "is required; the input has 8 channels");
  EXPECT_EQ(error_of(custom + "          - {op: batch_norm, name: bn, eps: -1}\n"),
            "bad.yaml:7:45: blocks[0].variants[0].ops[0].eps: eps must be a positive number (PyTorch's default is "
            "1e-5)");
  EXPECT_EQ(error_of(custom + "          - {op: batch_norm, name: bn, momentum: 2}\n"),
            "bad.yaml:7:50: blocks[0].variants[0].ops[0].momentum: momentum must be in [0, 1] (PyTorch's default "
            "is 0.1)");
  EXPECT_EQ(error_of(custom + "          - {op: drop_path, name: d}\n"),
            "bad.yaml:7:13: blocks[0].variants[0].ops[0].p: p (the probability of dropping a sample's whole branch, "
            "as StochasticDepth's p) is required");
  EXPECT_EQ(error_of(custom + "          - {op: drop_path, name: d, p: 0}\n"),
            "bad.yaml:7:41: blocks[0].variants[0].ops[0].p: p = 0 drops nothing: StochasticDepth and DropPath then "
            "return their input and save nothing; leave the op out");
  EXPECT_EQ(error_of(custom + "          - {op: layer_norm, name: ln, eps: 0}\n"),
            "bad.yaml:7:45: blocks[0].variants[0].ops[0].eps: eps must be a positive number (PyTorch's default is "
            "1e-5)");
  EXPECT_EQ(error_of(custom + "          - {op: channel_shuffle, name: s}\n"),
            "bad.yaml:7:13: blocks[0].variants[0].ops[0].groups: groups is required (ShuffleNetV2 shuffles 2 "
            "groups), an integer >= 1");
  EXPECT_EQ(error_of(custom + "          - {op: channel_shuffle, name: s, groups: 3}\n"),
            "bad.yaml:7:52: blocks[0].variants[0].ops[0].groups: the input's 8 channels are not divisible by groups 3");
  EXPECT_EQ(error_of(custom + "          - {op: space_to_depth, name: d, block_size: 3}\n"),
            "bad.yaml:7:55: blocks[0].variants[0].ops[0].block_size: the input's size 8 in spatial dim 0 is not "
            "divisible by block_size 3 (input 8x8x8)");
  EXPECT_EQ(error_of(custom + "          - {op: space_to_depth, name: d, block_size: 1}\n"),
            "bad.yaml:7:55: blocks[0].variants[0].ops[0].block_size: block_size must be >= 2, got 1");
  EXPECT_EQ(error_of(custom + "          - {op: space_to_depth, name: d, order: row_major}\n"),
            "bad.yaml:7:50: blocks[0].variants[0].ops[0].order: unknown order \"row_major\" (expected "
            "channel_major or block_major)");
  EXPECT_EQ(error_of(custom + "          - {op: conv, name: c, kernel: 3, init: blur}\n"),
            "bad.yaml:7:50: blocks[0].variants[0].ops[0].init: the blur filter is one filter per channel: it "
            "needs groups: depthwise (groups 1, the input has 8 channels)");
}

TEST(SpecErrors, MalformedJsonIsReportedWithJsonPositions) {
  EXPECT_EQ(file_error_of("bad_syntax.json"),
            "bad_syntax.json:3:30: invalid JSON: syntax error while parsing object key - "
            "unexpected '}'; expected string literal");
  EXPECT_EQ(error_of("{\"blocks\": [1, 2", "bad.json"),
            "bad.json:1:17: invalid JSON: syntax error while parsing array - unexpected end of "
            "input; expected ']'");
  EXPECT_EQ(error_of("{\"blocks\": [1, 2]}\n  garbage", "bad.json"),
            "bad.json:2:3: invalid JSON: syntax error while parsing value - invalid literal; "
            "last read: '2]}<U+000A>  g'; expected end of input");
}

TEST(SpecErrors, MalformedYamlIsReportedAtYamlCppsMark) {
  EXPECT_EQ(file_error_of("bad_syntax.yaml"), "bad_syntax.yaml:4:10: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(error_of("blocks:\n  - name: a\n   bad indent: 1\n"),
            "bad.yaml:3:4: invalid YAML: end of sequence not found");
}

TEST(SpecErrors, TopLevelMustBeOneMap) {
  EXPECT_EQ(error_of("- a\n- b\n"),
            "bad.yaml:1:1: the top level must be a map with `blocks` and/or `networks` (and "
            "optionally name, defaults, sweep), got a list");
  EXPECT_EQ(error_of("[1, 2]", "bad.json"),
            "bad.json:1:1: the top level must be a map with `blocks` and/or `networks` (and "
            "optionally name, defaults, sweep), got a list");
  EXPECT_EQ(error_of("just text\n"),
            "bad.yaml:1:1: the top level must be a map with `blocks` and/or `networks` (and "
            "optionally name, defaults, sweep), got the string \"just text\"");
  EXPECT_EQ(error_of(""), "bad.yaml:1:1: the spec is empty (expected a map with `blocks`)");
  EXPECT_EQ(error_of("# only a comment\n"), "bad.yaml:1:1: the spec is empty (expected a map with `blocks`)");
  EXPECT_EQ(error_of("blocks: []\n---\nblocks: []\n"),
            "bad.yaml:2:1: the file holds more than one YAML document; a spec is one document");
}

TEST(SpecErrors, DuplicateKeysInOneMap) {
  EXPECT_EQ(error_of(kHead + "  - name: b\n    batch: 2\n    batch: 3\n"),
            "bad.yaml:5:5: blocks[0].batch: duplicate key \"batch\" (first given on line 4)");
  EXPECT_EQ(error_of("{\"name\": \"a\",\n \"name\": \"b\"}", "bad.json"),
            "bad.json:2:2: name: duplicate key \"name\" (first given on line 1)");
}

TEST(SpecErrors, SweepKeysMustBeSweepableBlockFields) {
  EXPECT_EQ(error_of(kHead + "  - name: b\nsweep: {bach: [1, 2]}\n"),
            "bad.yaml:4:9: sweep.bach: unknown key \"bach\" (did you mean \"batch\"?)");
  EXPECT_EQ(error_of(kHead + "  - name: b\nsweep: {name: [x, y]}\n"),
            "bad.yaml:4:9: sweep.name: \"name\" cannot be swept (sweep values apply to every "
            "block)");
  EXPECT_EQ(error_of(kHead + "  - name: b\nsweep: {variants: [[standard]]}\n"),
            "bad.yaml:4:9: sweep.variants: \"variants\" cannot be swept (sweep values apply to "
            "every block)");
  EXPECT_EQ(error_of(kHead + "  - name: b\nsweep: {batch: 4}\n"),
            "bad.yaml:4:16: sweep.batch: expected a list of values to sweep, got the integer 4");
  EXPECT_EQ(error_of(kHead + "  - name: b\nsweep: {batch: []}\n"),
            "bad.yaml:4:16: sweep.batch: the list of values to sweep is empty");
}

TEST(SpecErrors, BadSweepValuesNameTheBlock) {
  EXPECT_EQ(error_of(kHead + "  - name: b\nsweep: {batch: [1, 0]}\n"),
            "bad.yaml:4:20: sweep.batch[1]: must be positive, got 0 (for block \"b\")");
  // A value that only fails at one sweep point says which point.
  EXPECT_EQ(error_of(kHead + "  - name: b\n    variants: [{kind: grouped, groups: 4}]\nsweep: "
                             "{in_channels: [8, 6]}\n"),
            "bad.yaml:4:40: blocks[0].variants[0].groups: in_channels 6 is not divisible by "
            "groups 4 (for sweep point in_channels=6)");
}

TEST(SpecErrors, NoCrashOnHostileDocuments) {
  // Unsupported tags, aliases of unfinished anchors, alias bombs and deep nesting all end in a
  // InputError rather than a crash or a hang.
  EXPECT_EQ(error_of(kHead + "  - name: b\n    batch: !!int 2\n"),
            "bad.yaml:4:12: blocks[0].batch: unsupported YAML tag \"tag:yaml.org,2002:int\" "
            "(write the value without a tag)");
  std::string bomb = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (char level = 'b'; level <= 'h'; ++level) {
    bomb += std::string(1, level) + ": &" + level + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", " : "") + "*" + char(level - 1);
    bomb += "]\n";
  }
  EXPECT_NE(error_of(bomb).find("the document has too many values"), std::string::npos) << error_of(bomb);
  const std::string deep = std::string(20000, '[') + std::string(20000, ']');
  EXPECT_NE(error_of(deep).find("bad.yaml:"), std::string::npos);
  EXPECT_NE(error_of(deep, "deep.json").find("deep.json:"), std::string::npos);
  EXPECT_NE(error_of("blocks: &x [*x]\n").find("bad.yaml:"), std::string::npos);
  EXPECT_NE(error_of("blocks:\n  - *undefined\n").find("bad.yaml:"), std::string::npos);
  EXPECT_NE(error_of(std::string("blocks: [\"\\x00\", \xff\xfe]\n")).find("bad.yaml:"), std::string::npos);
}

TEST(SpecErrors, JsonEscapesKeepLaterColumnsExact) {
  // yaml-cpp cannot read JSON's surrogate-pair escapes; the loader rewrites them, and the
  // position of what follows on the line must not move.
  EXPECT_EQ(error_of(R"({"name": "\ud83d\ude00 \u00e9 \" \/", "blocks": []})", "bad.json"),
            "bad.json:1:49: blocks: the list of blocks is empty");
  EXPECT_EQ(error_of(R"({"name": 1E400, "blocks": []})", "bad.json"),
            "bad.json:1:14: invalid JSON: number overflow parsing '1E400'");
  const Spec spec = parse_spec_text(
      R"({"name": "\ud83d\ude00", "blocks": [{"name": "b", "batch": 1, "in_channels": 1,
          "out_channels": 1, "size": 4, "variants": ["standard"]}]})",
      "emoji.json");
  EXPECT_EQ(spec.name, "\xF0\x9F\x98\x80");
}

TEST(SpecErrors, MutatedConfigsGiveASpecOrALocatedSpecError) {
  // Random edits of the shipped configs (fixed seed): every result is a Spec or a InputError
  // that names the file; nothing else escapes.
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& config : shipped_configs()) {
    std::ifstream in(config);
    std::stringstream text;
    text << in.rdbuf();
    files.emplace_back(std::filesystem::path(config).filename().string(), text.str());
  }
  ASSERT_FALSE(files.empty());
  std::mt19937 rng(2024);
  const std::string alphabet = " \n\t:-[]{},\"'&*!#|>0123456789abcxyz.e+%@`?";
  int specs = 0, errors = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    const auto& [name, original] = files[rng() % files.size()];
    std::string text = original;
    for (int edit = 0, edits = 1 + static_cast<int>(rng() % 4); edit < edits && !text.empty(); ++edit) {
      const std::size_t at = rng() % text.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 4) {
        case 0: text.erase(at, 1 + rng() % 5); break;
        case 1: text.insert(at, 1, c); break;
        case 2: text[at] = c; break;
        default: text.insert(at, text.substr(rng() % text.size(), rng() % 40)); break;
      }
    }
    try {
      parse_spec_text(text, name);
      ++specs;
    } catch (const InputError& e) {
      ASSERT_EQ(std::string(e.what()).rfind(name + ":", 0), 0u) << e.what();
      ++errors;
    }
  }
  EXPECT_GT(specs, 0);
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace convbench

// The spec loader on good input: defaults, precedence, JSON/YAML equivalence, sweep expansion,
// custom op resolution, the shipped configs, and file handling.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "ops/op_registry.hpp"
#include "shipped_configs.hpp"
#include "spec/block_kind.hpp"
#include "spec/kind_bottleneck.hpp"
#include "spec/kind_grouped.hpp"
#include "spec/kind_separable.hpp"
#include "spec/network_spec.hpp"
#include "spec/spec_loader.hpp"
#include "util/input_error.hpp"
#include "util/input_file.hpp"
#include "util/utf8.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

const std::string kSpecs = std::string(CONVBENCH_SOURCE_DIR) + "/tests/data/specs/";

// The parameters of the kinds whose parameters these tests read, as the dump shows them.
std::string kind_parameters_text(const VariantSpec& v) {
  if (v.kind == "bottleneck") {
    const auto p = kind_parameters<BottleneckParameters>(v);
    return " ratio " + std::to_string(p.ratio) + " groups " + std::to_string(p.groups);
  }
  if (v.kind == "grouped") return " groups " + std::to_string(kind_parameters<GroupedParameters>(v).groups);
  if (v.kind == "separable") return " multiplier " + std::to_string(kind_parameters<SeparableParameters>(v).multiplier);
  return "";
}

std::string ints(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

// Every resolved field of a spec except source positions (which differ between a YAML file and
// its JSON twin), one per line, so that a mismatch shows as a readable diff.
std::string describe(const Spec& spec) {
  std::ostringstream out;
  out << "spec " << spec.name << "\n";
  for (const BlockSpec& b : spec.blocks) {
    out << "block " << b.name << " @" << b.key_path << " point " << point_label(b) << " dims " << b.dims << " batch "
        << b.batch << " ch " << b.in_channels << "->" << b.out_channels << " size " << ints(b.size) << " kernel "
        << ints(b.kernel) << " stride " << ints(b.stride) << " padding " << ints(b.padding) << " dilation "
        << ints(b.dilation) << " bias " << b.bias << " norm " << to_string(b.norm) << "/" << b.norm_groups << " act "
        << to_string(b.act) << "/" << b.negative_slope << " dropout " << b.dropout << " residual " << b.residual
        << " dtype " << to_string(b.dtype) << " layout " << to_string(b.layout) << " mode " << to_string(b.mode)
        << " baseline " << b.baseline << "\n";
    for (const auto& [key, value] : b.point) out << "  point " << key << " = " << value << "\n";
    for (const VariantSpec& v : b.variants) {
      out << "  variant " << v.name << " @" << v.key_path << " kind " << v.kind << kind_parameters_text(v) << " output "
          << v.output << "\n";
      // A custom op's fields as its definition resolved them (defaults applied) in the graph.
      const Graph g = v.kind == "custom" ? build_variant_graph(b, v) : Graph{};
      for (std::size_t i = 0; i < v.ops.size(); ++i) {
        const CustomOpSpec& o = v.ops[i];
        out << "    op " << o.op << " " << o.name << " @" << o.key_path << " inputs";
        for (const std::string& in : o.inputs) out << " " << in;
        const OpDefinition& def = op_definition(g.ops.at(i).kind);
        out << " " << (def.attributes ? def.attributes(g.ops[i]).dump() : "{}") << "\n";
      }
    }
  }
  return out.str();
}

constexpr const char* kMinimal = R"(blocks:
  - name: only
    batch: 2
    in_channels: 8
    out_channels: 16
    size: 10
    variants: [standard, bottleneck, separable]
)";

TEST(SpecLoader, FillsEveryDefault) {
  const Spec spec = parse_spec_text(kMinimal, "configs/minimal.yaml");
  EXPECT_EQ(spec.name, "minimal");  // the file name without directory and extension
  EXPECT_EQ(spec.file, "configs/minimal.yaml");
  ASSERT_EQ(spec.blocks.size(), 1u);
  const BlockSpec& b = spec.blocks[0];
  EXPECT_EQ(b.name, "only");
  EXPECT_EQ(b.dims, 2);
  EXPECT_EQ(b.batch, 2);
  EXPECT_EQ(b.in_channels, 8);
  EXPECT_EQ(b.out_channels, 16);
  EXPECT_EQ(b.size, (std::vector<int64_t>{10, 10}));
  EXPECT_EQ(b.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(b.stride, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(b.padding, (std::vector<int64_t>{1, 1}));  // "same" for kernel 3
  EXPECT_EQ(b.dilation, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(b.bias);
  EXPECT_EQ(b.norm, NormKind::batch);
  EXPECT_EQ(b.norm_groups, 16);
  EXPECT_EQ(b.act, ActKind::relu);
  EXPECT_DOUBLE_EQ(b.negative_slope, 0.01);
  EXPECT_DOUBLE_EQ(b.dropout, 0.0);
  EXPECT_FALSE(b.residual);
  EXPECT_EQ(b.dtype, DType::float32);
  EXPECT_EQ(b.layout, Layout::channels_first);
  EXPECT_EQ(b.mode, RunMode::train);
  EXPECT_EQ(b.baseline, "standard");  // the first variant
  EXPECT_TRUE(b.point.empty());
  EXPECT_EQ(point_label(b), "");
  EXPECT_EQ(b.key_path, "blocks[0]");
  EXPECT_EQ(b.where.file, "configs/minimal.yaml");
  EXPECT_EQ(b.where.line, 2);
  EXPECT_EQ(b.where.column, 5);

  ASSERT_EQ(b.variants.size(), 3u);
  EXPECT_EQ(b.variants[0].kind, "standard");
  EXPECT_EQ(b.variants[0].name, "standard");
  EXPECT_EQ(b.variants[1].kind, "bottleneck");
  EXPECT_EQ(kind_parameters<BottleneckParameters>(b.variants[1]).ratio, 4);
  EXPECT_EQ(kind_parameters<BottleneckParameters>(b.variants[1]).groups, 1);
  EXPECT_EQ(b.variants[2].kind, "separable");
  EXPECT_EQ(kind_parameters<SeparableParameters>(b.variants[2]).multiplier, 1);
  EXPECT_EQ(b.variants[2].key_path, "blocks[0].variants[2]");
  EXPECT_EQ(b.variants[2].where.line, 7);
  EXPECT_EQ(b.variants[2].where.column, 38);
}

TEST(SpecLoader, SamePaddingIsDilationTimesKernelMinusOneHalvedPerDim) {
  const Spec spec = parse_spec_text(R"(blocks:
  - {name: a, batch: 1, in_channels: 1, out_channels: 1, size: 20, kernel: [5, 4], dilation: [2, 3], variants: [standard]}
  - {name: b, dims: 3, batch: 1, in_channels: 1, out_channels: 1, size: [9, 8, 7], kernel: [1, 2, 7], padding: same, variants: [standard]}
  - {name: c, batch: 1, in_channels: 1, out_channels: 1, size: 20, kernel: 3, padding: [0, 2], variants: [standard]}
)",
                                    "pad.yaml");
  EXPECT_EQ(spec.blocks[0].padding, (std::vector<int64_t>{4, 4}));  // 2*4/2, 3*3/2
  EXPECT_EQ(spec.blocks[1].padding, (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(spec.blocks[1].size, (std::vector<int64_t>{9, 8, 7}));
  EXPECT_EQ(spec.blocks[2].padding, (std::vector<int64_t>{0, 2}));
}

TEST(SpecLoader, BlockValueBeatsDefaultsAndSweepBeatsBoth) {
  const Spec spec = parse_spec_text(R"(defaults:
  batch: 4
  kernel: 5
  in_channels: 8
  out_channels: 8
  size: 16
  variants: [standard]
blocks:
  - name: inherits
  - name: overrides
    kernel: 1
    batch: 7
sweep:
  batch: [2]
)",
                                    "precedence.yaml");
  ASSERT_EQ(spec.blocks.size(), 2u);
  EXPECT_EQ(spec.blocks[0].kernel, (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(spec.blocks[1].kernel, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(spec.blocks[1].padding, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(spec.blocks[0].batch, 2);  // swept value beats the default 4
  EXPECT_EQ(spec.blocks[1].batch, 2);  // and the block's own 7
  EXPECT_EQ(spec.blocks[0].variants.size(), 1u);
}

TEST(SpecLoader, SweepExpandsBlockMajorWithTheFirstKeySlowest) {
  const Spec spec =
      parse_spec_text(R"(defaults: {in_channels: 4, out_channels: 4, batch: 1, size: 8, variants: [standard]}
blocks:
  - name: first
  - name: second
    size: 99
sweep:
  layout: [channels_first, channels_last]
  size: [6, [5, 7]]
  dropout: [0.5]
)",
                      "sweep.yaml");
  const std::vector<std::string> expected = {
      "first layout=channels_first,size=6,dropout=0.5",  "first layout=channels_first,size=[5,7],dropout=0.5",
      "first layout=channels_last,size=6,dropout=0.5",   "first layout=channels_last,size=[5,7],dropout=0.5",
      "second layout=channels_first,size=6,dropout=0.5", "second layout=channels_first,size=[5,7],dropout=0.5",
      "second layout=channels_last,size=6,dropout=0.5",  "second layout=channels_last,size=[5,7],dropout=0.5",
  };
  ASSERT_EQ(spec.blocks.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(spec.blocks[i].name + " " + point_label(spec.blocks[i]), expected[i]) << i;

  const BlockSpec& b = spec.blocks[7];
  using Point = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(b.point, (Point{{"layout", "\"channels_last\""}, {"size", "[5,7]"}, {"dropout", "0.5"}}));
  EXPECT_EQ(b.layout, Layout::channels_last);
  EXPECT_EQ(b.size, (std::vector<int64_t>{5, 7}));  // the swept size beats the block's 99
  EXPECT_DOUBLE_EQ(b.dropout, 0.5);
  EXPECT_EQ(spec.blocks[4].size, (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(spec.blocks[4].layout, Layout::channels_first);
  EXPECT_EQ(b.key_path, "blocks[1]");
}

TEST(SpecLoader, YamlAndJsonGiveIdenticalSpecs) {
  const Spec yaml = load_spec_file(kSpecs + "equivalent.yaml");
  const Spec json = load_spec_file(kSpecs + "equivalent.json");
  EXPECT_EQ(describe(yaml), describe(json));

  // The pair exercises every field, so pin a few resolved values too.
  ASSERT_EQ(yaml.blocks.size(), 8u);  // 2 blocks x batch {1, 3} x dtype {float32, float16}
  const BlockSpec& plain = yaml.blocks[3];
  EXPECT_EQ(point_label(plain), "batch=3,dtype=float16");
  EXPECT_EQ(plain.dtype, DType::float16);  // the sweep beats the block's bfloat16
  EXPECT_EQ(plain.batch, 3);
  EXPECT_EQ(plain.padding, (std::vector<int64_t>{2, 2}));  // same, dilation 2
  EXPECT_EQ(plain.stride, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(plain.norm, NormKind::group);
  EXPECT_EQ(plain.norm_groups, 4);
  EXPECT_EQ(plain.act, ActKind::leaky_relu);
  EXPECT_DOUBLE_EQ(plain.negative_slope, 0.2);
  EXPECT_DOUBLE_EQ(plain.dropout, 0.25);
  EXPECT_TRUE(plain.residual);
  EXPECT_FALSE(plain.bias);
  EXPECT_EQ(plain.layout, Layout::channels_last);
  EXPECT_EQ(plain.mode, RunMode::infer);
  EXPECT_EQ(plain.baseline, "bottleneck");
  EXPECT_EQ(plain.variants[1].key_path, "defaults.variants[1]");
  EXPECT_EQ(kind_parameters<BottleneckParameters>(plain.variants[1]).ratio, 2);
  EXPECT_EQ(kind_parameters<BottleneckParameters>(plain.variants[1]).groups, 2);

  const BlockSpec& volume = json.blocks[4];
  EXPECT_EQ(volume.dims, 3);
  EXPECT_EQ(volume.kernel, (std::vector<int64_t>{3, 1, 3}));
  EXPECT_EQ(volume.baseline, "separable");
  ASSERT_EQ(volume.variants.size(), 3u);
  EXPECT_EQ(kind_parameters<SeparableParameters>(volume.variants[0]).multiplier, 2);
  EXPECT_EQ(volume.variants[1].name, "g4");
  EXPECT_EQ(volume.variants[2].output, "out");
  EXPECT_EQ(volume.variants[2].ops.size(), 12u);

  // Positions are each file's own.
  EXPECT_EQ(yaml.blocks[4].where.line, 28);
  EXPECT_EQ(json.blocks[4].where.line, 29);
  EXPECT_EQ(json.blocks[4].where.file, kSpecs + "equivalent.json");
}

TEST(SpecLoader, ResolvesCustomOpFields) {
  const Spec spec = load_spec_file(kSpecs + "equivalent.yaml");
  const BlockSpec& block = spec.blocks[4];
  const VariantSpec& v = block.variants[2];
  ASSERT_EQ(v.kind, "custom");
  // What each op's fields resolved to (the defaults applied by its definition), in its graph.
  const Graph g = build_variant_graph(block, v);
  const auto spec_op = [&](const std::string& name) -> const CustomOpSpec& {
    for (const CustomOpSpec& o : v.ops)
      if (o.name == name) return o;
    throw std::runtime_error("no op " + name);
  };
  const auto op = [&](const std::string& name) -> const Op& {
    for (const Op& o : g.ops)
      if (o.name == name) return o;
    throw std::runtime_error("no op " + name);
  };
  using V = std::vector<int64_t>;
  const ConvAttrs& a = op("a").conv;
  EXPECT_EQ(spec_op("a").inputs, (std::vector<std::string>{"input"}));  // first op, no inputs: the input
  EXPECT_EQ(a.out_channels, 4);
  EXPECT_EQ(a.kernel, (V{1, 1, 1}));
  EXPECT_EQ(a.stride, (V{1, 1, 1}));
  EXPECT_EQ(a.padding, (V{0, 0, 0}));
  EXPECT_EQ(a.dilation, (V{1, 1, 1}));
  EXPECT_TRUE(a.output_padding.empty());
  EXPECT_EQ(a.bias, true);  // the block's bias
  EXPECT_EQ(spec_op("a").key_path, "blocks[1].variants[2].ops[0]");
  EXPECT_EQ(spec_op("a").where.line, 42);
  EXPECT_EQ(spec_op("a").where.column, 13);

  EXPECT_EQ(spec_op("an").inputs, (std::vector<std::string>{"a"}));  // unary: the previous op
  EXPECT_EQ(op("an").norm.groups, 2);
  EXPECT_DOUBLE_EQ(op("ar").negative_slope, 0.1);
  const PoolAttrs& pooled = op("pooled").pool;
  EXPECT_EQ(pooled.kernel, (V{2, 2, 2}));
  EXPECT_EQ(pooled.stride, (V{2, 2, 2}));  // pools: stride defaults to the kernel
  EXPECT_EQ(pooled.padding, (V{0, 0, 0}));
  EXPECT_EQ(op("up").upsample_scale, 2);
  EXPECT_DOUBLE_EQ(op("dr").dropout_p, 0.1);
  EXPECT_EQ(spec_op("cat").inputs, (std::vector<std::string>{"ar", "dr"}));
  const ConvAttrs& t = op("t").conv;
  EXPECT_EQ(t.groups, 2);
  EXPECT_EQ(t.padding, (V{1, 1, 1}));  // "same" by default
  EXPECT_EQ(t.output_padding, (V{0, 0, 0}));
  EXPECT_EQ(op("ap").pool.padding, (V{1, 1, 1}));
  EXPECT_EQ(spec_op("out").inputs, (std::vector<std::string>{"ap"}));
}

TEST(SpecLoader, PoolsDefaultToAWindowOfTwo) {
  const Spec spec = parse_spec_text(R"(blocks:
  - name: b
    batch: 1
    in_channels: 4
    out_channels: 4
    size: 8
    kernel: 5
    variants:
      - kind: custom
        ops: [{op: max_pool, name: m}, {op: upsample, name: u}]
)",
                                    "pool.yaml");
  const Graph g = build_variant_graph(spec.blocks[0], spec.blocks[0].variants[0]);
  const PoolAttrs& pool = g.ops.at(0).pool;
  EXPECT_EQ(pool.kernel, (std::vector<int64_t>{2, 2}));  // not the block's 5
  EXPECT_EQ(pool.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(pool.padding, (std::vector<int64_t>{0, 0}));
  EXPECT_FALSE(spec.blocks[0].variants[0].ops[0].fields.has("dilation"));
  EXPECT_EQ(spec.blocks[0].variants[0].output, "u");
}

TEST(SpecLoader, DepthwiseGroupsResolveToTheInputChannels) {
  const Spec spec = load_spec_file(std::string(CONVBENCH_SOURCE_DIR) + "/configs/subtracted-conv.yaml");
  const VariantSpec& v = spec.blocks[0].variants[1];
  ASSERT_EQ(v.ops.size(), 5u);
  const Graph g = build_variant_graph(spec.blocks[0], v);  // what the fields resolved to
  EXPECT_EQ(g.ops.at(0).conv.out_channels, 64);
  EXPECT_EQ(v.ops[1].name, "depth");
  EXPECT_EQ(g.ops.at(1).conv.groups, 64);  // "depthwise": the 64 channels of p
  EXPECT_EQ(g.ops.at(1).conv.out_channels, 64);
  EXPECT_EQ(g.ops.at(1).conv.kernel, (std::vector<int64_t>{3, 3}));  // the block's kernel
  EXPECT_EQ(g.ops.at(1).conv.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(g.ops.at(1).conv.bias, false);
  EXPECT_EQ(v.ops[2].inputs, (std::vector<std::string>{"depth", "p"}));
  EXPECT_EQ(v.output, "x");
}

TEST(SpecLoader, EveryShippedConfigLoads) {
  int count = 0;
  for (const std::string& config : shipped_configs()) {
    SCOPED_TRACE(config);
    const Spec spec = load_spec_file(config);
    EXPECT_FALSE(spec.blocks.empty());
    for (const BlockSpec& b : spec.blocks) EXPECT_FALSE(b.variants.empty());
    ++count;
  }
  EXPECT_GE(count, 5);
}

TEST(SpecLoader, SeedConfigDescribesThePyTorchBlock) {
  const Spec spec = load_spec_file(std::string(CONVBENCH_SOURCE_DIR) + "/configs/seed-blocks.yaml");
  ASSERT_EQ(spec.blocks.size(), 1u);
  const BlockSpec& b = spec.blocks[0];
  EXPECT_EQ(b.dims, 3);
  EXPECT_EQ(b.batch, 6);
  EXPECT_EQ(b.in_channels, 16);
  EXPECT_EQ(b.out_channels, 32);
  EXPECT_EQ(b.size, (std::vector<int64_t>{32, 32, 32}));
  EXPECT_EQ(b.kernel, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(b.padding, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_TRUE(b.bias);
  EXPECT_EQ(b.norm, NormKind::batch);
  EXPECT_EQ(b.act, ActKind::relu);
  ASSERT_EQ(b.variants.size(), 3u);
  EXPECT_EQ(b.variants[0].name, "standard");
  EXPECT_EQ(b.variants[1].name, "bottleneck");
  EXPECT_EQ(b.variants[2].name, "separable");

  // The seed's PyTorch counts (13,920 / 7,872 / 1,088) follow from these fields with a biased
  // conv and a BatchNorm (weight + bias) after every conv: the config encodes that block.
  const int64_t k = b.kernel[0] * b.kernel[1] * b.kernel[2];
  const int64_t in = b.in_channels, out = b.out_channels;
  const auto conv = [&](int64_t ci, int64_t co, int64_t kv, int64_t groups) {
    return co * (ci / groups) * kv + (b.bias ? co : 0) + 2 * co;
  };
  EXPECT_EQ(conv(in, out, k, 1), 13920);
  const auto bottleneck = kind_parameters<BottleneckParameters>(b.variants[1]);
  const int64_t mid = out / bottleneck.ratio;
  EXPECT_EQ(conv(in, mid, 1, 1) + conv(mid, mid, k, bottleneck.groups) + conv(mid, out, 1, 1), 7872);
  const int64_t dw = in * kind_parameters<SeparableParameters>(b.variants[2]).multiplier;
  EXPECT_EQ(conv(in, dw, k, in) + conv(dw, out, 1, 1), 1088);
}

TEST(SpecLoader, ResnetConfigSweepsBothLayouts) {
  const Spec spec = load_spec_file(std::string(CONVBENCH_SOURCE_DIR) + "/configs/resnet50-stages.yaml");
  ASSERT_EQ(spec.blocks.size(), 6u);
  EXPECT_EQ(spec.blocks[0].layout, Layout::channels_first);
  EXPECT_EQ(spec.blocks[1].layout, Layout::channels_last);
  EXPECT_EQ(point_label(spec.blocks[1]), "layout=channels_last");
  EXPECT_EQ(spec.blocks[0].baseline, "bottleneck");
  EXPECT_TRUE(spec.blocks[0].residual);
  EXPECT_EQ(spec.blocks[4].stride, (std::vector<int64_t>{2, 2}));
}

TEST(SpecLoader, AcceptsAnchorsAliasesAndQuotedStrings) {
  const Spec spec = parse_spec_text(R"(defaults: {in_channels: 4, out_channels: 4, batch: 1, size: 8}
blocks:
  - name: "a"
    layout: 'channels_last'
    variants: &pair [standard, {kind: grouped, groups: 2}]
  - name: b
    variants: *pair
)",
                                    "alias.yaml");
  ASSERT_EQ(spec.blocks.size(), 2u);
  EXPECT_EQ(spec.blocks[0].layout, Layout::channels_last);
  ASSERT_EQ(spec.blocks[1].variants.size(), 2u);
  EXPECT_EQ(kind_parameters<GroupedParameters>(spec.blocks[1].variants[1]).groups, 2);
}

TEST(SpecLoader, JsonWithTabsAndCompactSyntaxLoads) {
  const std::string text =
      "{\n\t\"blocks\":[{\"name\":\"t\",\"batch\":1,\"in_channels\":2,\"out_channels\":2,"
      "\"size\":[4,4],\"kernel\":1,\"variants\":[\"standard\"]}]}";
  const Spec spec = parse_spec_text(text, "tabs.json");
  ASSERT_EQ(spec.blocks.size(), 1u);
  EXPECT_EQ(spec.blocks[0].padding, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(spec.blocks[0].where.line, 2);
  EXPECT_EQ(spec.blocks[0].where.column, 12);
}

TEST(SpecFile, MissingFileIsASpecErrorAtLineZero) {
  const std::string path = kSpecs + "does-not-exist.yaml";
  try {
    load_spec_file(path);
    FAIL() << "expected a InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 0);
    EXPECT_EQ(std::string(e.what()), path + ": cannot open the spec file: No such file or directory");
  }
  EXPECT_THROW(read_input_file(path, "spec file", kMaxSpecBytes), InputError);
}

TEST(SpecFile, DirectoryIsASpecError) {
  try {
    load_spec_file(kSpecs);
    FAIL() << "expected a InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              kSpecs + ": is a directory, not a spec file: give a regular file, or - for standard input");
  }
}

TEST(SpecFile, HashIsSha256OfTheBytesRead) {
  // hash_abc.txt holds the three bytes "abc": the FIPS 180-4 example digest.
  const InputText in = read_input_file(kSpecs + "hash_abc.txt", "spec file", kMaxSpecBytes);
  EXPECT_EQ(in.text, "abc");
  EXPECT_EQ(in.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(load_spec_file(kSpecs + "equivalent.yaml").sha256,
            read_input_file(kSpecs + "equivalent.yaml", "spec file", kMaxSpecBytes).sha256);
}

TEST(SpecFile, SpecialFilesAreRefusedAndTooLargeFilesAreNotRead) {
  for (const char* device : {"/dev/zero", "/dev/null"}) {
    try {
      load_spec_file(device);
      FAIL() << device;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string(device) + ": is a device, not a spec file: give a regular file, or - for standard input");
    }
  }
  try {
    read_input_file(kSpecs + "equivalent.yaml", "spec file", 10);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the spec file is larger than"), std::string::npos) << e.what();
  }
}

// What parse_spec_text says about `text`: the message of its InputError, or "" when it parses.
std::string error_of(const std::string& text, const std::string& file = "bad.yaml") {
  try {
    parse_spec_text(text, file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SpecFile, InvalidUtf8IsAnErrorAtItsLineAndColumn) {
  // Located at the byte, with the key path of the name that holds it, shown escaped: the name is
  // refused before any work, where it would have failed the results JSON after the whole run.
  EXPECT_EQ(error_of("blocks:\n  - name: \"bl\xff\"\n"),
            "bad.yaml:2:14: blocks[0].name: the spec is not valid UTF-8 (byte 0xff in \"bl\\xff\"): save it as UTF-8");
  const std::string block =
      "blocks:\n  - name: b\n    batch: 1\n    in_channels: 4\n    out_channels: 4\n    size: 4\n";
  EXPECT_EQ(error_of(block + "    variants: [standard, {kind: separable, name: \"s\xe9p\"}]\n"),
            "bad.yaml:7:52: blocks[0].variants[1].name: the spec is not valid UTF-8 (byte 0xe9 in \"s\\xe9p\"): save "
            "it as UTF-8");
  // A key holding the byte: located at its map; a byte in a comment: at its line and column.
  EXPECT_EQ(error_of(block + "    variants: [standard]\n    caf\xe9: 1\n"),
            "bad.yaml:8:8: blocks[0]: the spec is not valid UTF-8 (byte 0xe9 in \"caf\\xe9\"): save it as UTF-8");
  EXPECT_EQ(error_of(block + "    variants: [standard]  # caf\xe9\n"),
            "bad.yaml:7:32: the spec is not valid UTF-8 (byte 0xe9): save it as UTF-8");
  EXPECT_EQ(error_of("{\"blocks\": [{\"name\": \"caf\xe9\"}]}", "bad.json"),
            "bad.json:1:26: blocks[0].name: the spec is not valid UTF-8 (byte 0xe9 in \"caf\\xe9\"): save it as UTF-8");
  EXPECT_EQ(find_invalid_utf8("plain ascii"), std::nullopt);
  EXPECT_EQ(find_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);  // é € 😀
  EXPECT_EQ(find_invalid_utf8("caf\xc3"), 3u);                                              // truncated
  EXPECT_EQ(find_invalid_utf8("\xc0\xaf"), 0u);                                             // overlong '/'
  EXPECT_EQ(find_invalid_utf8("a\xed\xa0\x80"), 1u);                                        // a surrogate
  EXPECT_EQ(find_invalid_utf8("\xf4\x90\x80\x80"), 0u);                                     // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\x80"), 0u);                                                 // a lone continuation byte
}

TEST(SpecFile, ALatin1PathIsRecordedEscaped) {
  // The file's name cannot be refused (the system accepts it), so it is carried as text JSON can
  // hold: in Spec::file (the provenance, plans, the resolved spec) and in every message.
  const std::string block =
      "blocks:\n  - name: b\n    batch: 1\n    in_channels: 4\n    out_channels: 4\n    size: 4\n";
  const Spec spec = parse_spec_text(block + "    variants: [standard]\n",
                                    "sp\xe9"
                                    "c.yaml");
  EXPECT_EQ(spec.file,
            "sp\\xe9"
            "c.yaml");
  EXPECT_EQ(spec.name,
            "sp\\xe9"
            "c");
  EXPECT_EQ(
      error_of(block,
               "sp\xe9"
               "c.yaml"),
      "sp\\xe9"
      "c.yaml:2:5: blocks[0].variants: missing required field \"variants\" (set it in the block or in `defaults`)");
}

TEST(SpecFile, TheRunCountIsBoundedBeforeAnythingIsBuilt) {
  // 100 blocks x 1000 sweep points x 1000 variants shared through one alias: 10^8 runs.
  const std::string bomb = std::string(CONVBENCH_SOURCE_DIR) + "/tests/data/malformed/specs/alias-run-bomb.yaml";
  try {
    load_spec_file(bomb);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("sweep: the spec expands to 100000000 runs (100 blocks x 1000 sweep points, "
                                   "100000 variants in all), more than the limit of 10000 (--max-runs raises it)"),
        std::string::npos)
        << e.what();
  }
  const std::string spec =
      "blocks:\n  - {name: b, in_channels: 4, out_channels: 8, size: 8, variants: [standard, separable]}\n"
      "sweep: {batch: [1, 2, 3]}\n";
  EXPECT_EQ(parse_spec_text(spec, "s.yaml", SpecLimits{6, {}}).blocks.size(), 3u);
  EXPECT_THROW(parse_spec_text(spec, "s.yaml", SpecLimits{5, {}}), InputError);
}

}  // namespace
}  // namespace convbench

namespace convbench {
namespace {

// Each enum's spellings come from one table: every word is distinct, reads back as its value, and
// is what to_string writes.
template <class Enum>
void expect_one_word_each(const EnumWords<Enum>& table, size_t enumerators) {
  EXPECT_EQ(table.size(), enumerators);
  std::vector<std::string> words = words_of(table);
  std::sort(words.begin(), words.end());
  EXPECT_EQ(std::adjacent_find(words.begin(), words.end()), words.end());
  for (const EnumWord<Enum>& row : table) {
    EXPECT_EQ(value_of(table, row.word), row.value) << row.word;
    EXPECT_EQ(to_string(row.value), row.word);
  }
  EXPECT_EQ(value_of(table, "no-such-word"), std::nullopt);
}

TEST(SpecWords, EveryEnumeratorHasOneWordFromOneTable) {
  expect_one_word_each(norm_kind_words(), 3);
  expect_one_word_each(act_kind_table(), 7);
  expect_one_word_each(run_mode_words(), 2);
  expect_one_word_each(layout_conversion_words(), 2);
  expect_one_word_each(dropout_kind_words(), 2);
  EXPECT_EQ(act_kind_words(), words_of(act_kind_table()));
}

}  // namespace
}  // namespace convbench

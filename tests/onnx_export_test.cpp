// `convbench export`: every variant of the shipped configs whose ops the importer reads back is
// exported and read back as an onnx variant of the same block, which must be the same graph
// (graph hash: ops, attributes, shapes, parameters) with the same counts and saved bytes; and
// hostile outputs and unexportable variants are refused with exit 2, nothing written.
#ifdef CONVBENCH_WITH_ONNX

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "analysis/variant_analysis.hpp"
#include "cli_harness.hpp"
#include "onnx/onnx_export.hpp"
#include "onnx/onnx_model.hpp"
#include "ops/param_values.hpp"
#include "shipped_configs.hpp"
#include "spec/spec_loader.hpp"
#include "variants/graph_hash.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;
using testing::temp_path;

// Whether the importer (lib/onnx) reads the exported graph back op for op. Left out: what the
// export writes as several nodes of other kinds (pixel_unshuffle's order, a 3-D space_to_depth or
// depth_to_space, Inplace-ABN's fused op, a folded conv, gelu's tanh form as its polynomial), what
// ONNX cannot tell apart in inference (channel_dropout is a Dropout there, drop_path an Identity, a
// frozen conv a Conv), layout conversions (Identity in the file) and graphs a memory policy
// rewrote, whose ops are the same but whose hash records it.
bool reads_back(const BlockSpec& block, const Graph& g) {
  if (block.network || g.memory_policy != MemoryPolicy::none || block.layout != Layout::channels_first) return false;
  if (block.dtype != DType::float32 && block.dtype != DType::float64) return false;
  for (const Op& op : g.ops) {
    switch (op.kind) {
      case OpKind::cast: return false;  // mixed precision: exported as its plain variant, never with casts
      case OpKind::gelu:                // the tanh form is written as its polynomial, which the importer does not read
        if (op.gelu_approximate == GeluApproximation::tanh) return false;
        break;
      case OpKind::batch_norm_act:
      case OpKind::folded_conv:
      case OpKind::channel_dropout:
      case OpKind::drop_path:
      case OpKind::convert_layout: return false;
      case OpKind::space_to_depth:
        if (block.dims != 2 || op.space_to_depth.order != SpaceToDepthOrder::block_major) return false;
        break;
      case OpKind::depth_to_space:
        if (block.dims != 2) return false;
        break;
      case OpKind::conv:
        if (op.conv.frozen) return false;
        break;
      default: break;
    }
  }
  return true;
}

// The exported file, read as {kind: onnx} reads it: its ops become the variant's.
VariantSpec imported(const std::string& path, const VariantSpec& of) {
  const OnnxBlock model = read_onnx_block(path);
  VariantSpec v;
  v.kind = "onnx";
  v.name = of.name + "-onnx";
  v.key_path = of.key_path;
  for (const ImportedOp& op : model.ops) {
    CustomOpSpec s;
    s.op = op.op;
    s.name = op.name;
    s.inputs = op.inputs;
    s.fields = op.fields;
    s.key_path = op.node;
    s.where.file = path;
    s.values = op.values;
    v.ops.push_back(std::move(s));
  }
  v.output = model.output;
  return v;
}

TEST(OnnxExport, ShippedVariantsReadBackAsTheSameGraph) {
  int compared = 0, exported = 0;
  for (const std::string& file : shipped_configs()) {
    const Spec spec = load_spec_file(file);
    for (const BlockSpec& block : spec.blocks) {
      const bool training = block.mode == RunMode::train;
      if (block.network) continue;  // an onnx variant is a whole block, never a network
      for (const VariantSpec& v : block.variants) {
        const Graph g = build_variant_graph(block, v);
        if (!reads_back(block, g)) continue;
        const std::string where = file + ": " + block.name + "/" + v.name;
        const std::string path = temp_path("export_roundtrip.onnx");
        std::ofstream(path, std::ios::binary)
            << export_onnx_model(g, initial_graph_values(g, 42), {block.name + "/" + v.name, "test", ""})
                   .SerializeAsString();
        ++exported;
        const Graph back = build_variant_graph(block, imported(path, v));
        EXPECT_EQ(graph_hash(back, training), graph_hash(g, training))
            << where << "\nexported:\n"
            << graph_canonical_text(g, training) << "read back:\n"
            << graph_canonical_text(back, training);
        const VariantAnalysis a = analyze_variant(g, training), b = analyze_variant(back, training);
        EXPECT_EQ(b.params, a.params) << where;
        EXPECT_EQ(b.macs.forward, a.macs.forward) << where;
        EXPECT_EQ(b.flops.forward, a.flops.forward) << where;
        EXPECT_EQ(b.flops.backward_data, a.flops.backward_data) << where;
        EXPECT_EQ(b.memory.saved_bytes, a.memory.saved_bytes) << where;
        EXPECT_EQ(b.memory.peak_bytes, a.memory.peak_bytes) << where;
        // The weights read back are the ones written: convbench's starting values, in float32.
        const GraphValues written = initial_graph_values(g, 42), read = initial_graph_values(back, 0);
        for (size_t i = 0; i < g.params.size(); ++i)
          for (size_t k = 0; k < written.params[i].size(); ++k)
            ASSERT_EQ(read.params[i][k], static_cast<float>(written.params[i][k])) << where << " " << g.params[i].name;
        for (size_t i = 0; i < g.buffers.size(); ++i)
          for (size_t k = 0; k < written.buffers[i].size(); ++k)
            ASSERT_EQ(read.buffers[i][k], static_cast<float>(written.buffers[i][k]))
                << where << " " << g.buffers[i].name;
        ++compared;
        fs::remove(path);
      }
    }
  }
  // The configs hold many such variants (seed 000's, ResNet's, RepVGG's unfolded, the branches'):
  // a filter that let none through would pass vacuously.
  EXPECT_GE(compared, 30) << exported << " exported";
  std::printf("%d exported variants read back as the same graph\n", compared);
}

std::string write_spec(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

const char* kTwoBlocks =
    "blocks:\n"
    "  - {name: first, dims: 2, batch: 1, in_channels: 4, out_channels: 8, size: 8, variants: [standard]}\n"
    "  - {name: second, dims: 2, batch: 1, in_channels: 4, out_channels: 8, size: 8, dtype: DTYPE,\n"
    "     variants: [standard, {kind: separable, name: sep}]}\n";

std::string two_blocks(const std::string& dtype) {
  std::string text = kTwoBlocks;
  text.replace(text.find("DTYPE"), 5, dtype);
  return write_spec("export_two.yaml", text);
}

TEST(OnnxExportCli, WritesOneFilePerVariantUnderTheBlocksName) {
  const std::string dir = temp_path("export_out");
  fs::remove_all(dir);
  const auto r = run_cli("export " + two_blocks("float32") + " --onnx " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"first/standard.onnx", "second/standard.onnx", "second/sep.onnx"})
    EXPECT_TRUE(fs::is_regular_file(dir + "/" + f)) << f << "\n" << r.out;
  EXPECT_NE(r.out.find("3 ONNX models written (opset 17"), std::string::npos) << r.out;
  // The importer reads it: opset 17, convbench named as its producer.
  const OnnxBlock back = read_onnx_block(dir + "/second/standard.onnx");
  EXPECT_EQ(back.opset, kOnnxExportOpset);
  EXPECT_EQ(back.producer.rfind("convbench", 0), 0u) << back.producer;
  fs::remove_all(dir);
}

TEST(OnnxExportCli, RefusalsWriteNothing) {
  // A variant that cannot be written (a float16 block) after one that can: exit 2 naming the
  // block, the variant and why, and no folder made.
  const std::string dir = temp_path("export_refused");
  fs::remove_all(dir);
  auto r = run_cli("export " + two_blocks("float16") + " --onnx " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("blocks[1].variants[0]: block \"second\", variant \"standard\": cannot be exported to ONNX: "
                       "dtype float16"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir));

  // A mixed-precision variant: its casts are how the step runs, not the model; refused the same way.
  std::string amp = kTwoBlocks;
  amp.replace(amp.find("dtype: DTYPE"), 12, "precision: amp_bfloat16");
  r = run_cli("export " + write_spec("export_amp.yaml", amp) + " --onnx " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a cast that mixed precision inserts: export the variant with precision: plain"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir));

  // DIR is a file: refused, the file left as it was.
  const std::string file = write_spec("export_a_file", "keep me");
  r = run_cli("export " + two_blocks("float32") + " --onnx " + file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a folder"), std::string::npos) << r.err;
  EXPECT_EQ(testing::read_file(file), "keep me");

  // DIR's parent does not exist.
  r = run_cli("export " + two_blocks("float32") + " --onnx " + dir + "/no/such");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("its parent folder does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir));

  // A block's folder cannot be made (a file is in its place: what an unwritable folder does too,
  // and root, who runs the tests, is refused nothing by permissions): the other block's folder,
  // made first, is taken away again.
  fs::create_directory(dir);
  std::ofstream(dir + "/second") << "in the way";
  r = run_cli("export " + two_blocks("float32") + " --onnx " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot create the folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/first")) << "a partial export was left";
  fs::remove_all(dir);
}

// A link below DIR where a block's folder goes (DIR/block -> ../elsewhere) is refused, never
// written through; the link is the user's and stays, whatever else fails.
TEST(OnnxExportCli, ALinkBelowTheFolderIsRefusedAndLeftAlone) {
  const fs::path dir = temp_path("export_linked"), elsewhere = temp_path("export_elsewhere");
  fs::remove_all(dir);
  fs::remove_all(elsewhere);
  fs::create_directories(dir);
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, dir / "second");
  auto r = run_cli("export " + two_blocks("float32") + " --onnx " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a symbolic link: convbench writes models only into real folders below"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::is_empty(elsewhere));
  EXPECT_TRUE(fs::is_symlink(dir / "second")) << "the user's link was removed";
  EXPECT_FALSE(fs::exists(dir / "first")) << "a partial export was left";
  // The link for the first block, a file in the way of the second: the same.
  fs::remove(dir / "second");
  fs::create_directory_symlink(elsewhere, dir / "first");
  std::ofstream(dir / "second") << "in the way";
  r = run_cli("export " + two_blocks("float32") + " --onnx " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(fs::is_empty(elsewhere));
  EXPECT_TRUE(fs::is_symlink(dir / "first")) << "the user's link was removed";
  fs::remove_all(dir);
  fs::remove_all(elsewhere);
}

// Names that are safe alike take the first free file name, each variant its own file; DIR with
// a trailing slash is the folder; an empty DIR is refused.
TEST(OnnxExportCli, NamesMadeSafeAlikeGetFilesOfTheirOwn) {
  const std::string dir = temp_path("export_alike");
  fs::remove_all(dir);
  const std::string spec = write_spec(
      "export_alike.yaml",
      "blocks:\n  - {name: b, dims: 2, batch: 1, in_channels: 4, out_channels: 8, size: 8,\n"
      "     variants: [{kind: standard, name: a/b}, {kind: standard, name: a_b}, {kind: standard, name: a_b_2}]}\n");
  auto r = run_cli("export " + spec + " --onnx " + dir + "/");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"a_b.onnx", "a_b_2.onnx", "a_b_2_2.onnx"})
    EXPECT_TRUE(fs::is_regular_file(dir + "/b/" + f)) << f << "\n" << r.out;
  // The table says which variant went where: a_b_2's row names a_b_2_2.onnx.
  const size_t at = r.out.find("/b/a_b_2_2.onnx");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string row = r.out.substr(r.out.rfind('\n', at) + 1, at - r.out.rfind('\n', at));
  EXPECT_NE(row.find(" a_b_2 "), std::string::npos) << row;
  r = run_cli("export " + spec + " --onnx ''");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--onnx: is empty"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(OnnxExportCli, HostileNamesStayInsideTheFolder) {
  const std::string dir = temp_path("export_names");
  fs::remove_all(dir);
  const std::string spec = write_spec(
      "export_names.yaml",
      "blocks:\n  - {name: \"..\", dims: 2, batch: 1, in_channels: 4, out_channels: 8, size: 8,\n"
      "     variants: [{kind: standard, name: \"../../escape me\"}, {kind: standard, name: \".hidden\"}]}\n");
  const auto r = run_cli("export " + spec + " --onnx " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir + "/_../_.._.._escape_me.onnx")) << r.out;
  EXPECT_TRUE(fs::is_regular_file(dir + "/_../_.hidden.onnx")) << r.out;
  EXPECT_FALSE(fs::exists(fs::path(dir).parent_path() / "escape me.onnx"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace convbench

#endif  // CONVBENCH_WITH_ONNX

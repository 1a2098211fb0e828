// layout_conversion: boundary (seed 004: a channels-last block inside a channels-first network
// pays for converting its input and its output): the graph it builds, that it computes the same
// function as the block without conversions, what the conversions cost in counts and memory, the
// spec's errors, and the cost shown apart end to end.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analysis/variant_analysis.hpp"
#include "backends/reference/reference_backend.hpp"
#include "cli_harness.hpp"
#include "measure/variant_runner.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "spec/spec_loader.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::small_block;
using testing::variant;

BlockSpec boundary_block(Layout layout) {
  BlockSpec b = small_block(2, 4, 8, 6);
  b.residual = true;
  b.layout = layout;
  b.layout_conversion = LayoutConversion::boundary;
  return b;
}

std::string spec_error(const std::string& text) {
  try {
    parse_spec_text(text, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LayoutConversion, AChannelsLastBlockRunsBetweenTwoConversionsFromAndToChannelsFirst) {
  const Graph g = build_variant_graph(boundary_block(Layout::channels_last), variant("standard"));
  EXPECT_EQ(g.desc(g.input).layout, Layout::channels_first);
  EXPECT_EQ(g.desc(g.output).layout, Layout::channels_first);
  ASSERT_GE(g.ops.size(), 3u);
  EXPECT_EQ(g.ops.front().kind, OpKind::convert_layout);
  EXPECT_EQ(g.ops.front().name, "to_channels_last");
  EXPECT_EQ(g.ops.back().kind, OpKind::convert_layout);
  EXPECT_EQ(g.ops.back().name, "to_channels_first");
  // Every op between them, the residual shortcut's add included, works channels-last.
  for (size_t i = 1; i + 1 < g.ops.size(); ++i) {
    SCOPED_TRACE(g.ops[i].name);
    EXPECT_NE(g.ops[i].kind, OpKind::convert_layout);
    EXPECT_EQ(g.desc(g.ops[i].output).layout, Layout::channels_last);
  }
}

TEST(LayoutConversion, AChannelsFirstBlockHasNothingToConvert) {
  const BlockSpec first = boundary_block(Layout::channels_first);
  EXPECT_FALSE(converts_at_boundary(first));
  BlockSpec plain = first;
  plain.layout_conversion = LayoutConversion::none;
  const Graph a = build_variant_graph(first, variant("standard"));
  const Graph b = build_variant_graph(plain, variant("standard"));
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(a.ops[i].name, b.ops[i].name);
}

// The same parameters and input give the same output and parameter gradients, to the last bit in
// float64 on the reference backend: conversions move elements, they compute nothing.
TEST(LayoutConversion, ComputesExactlyWhatTheBlockComputesWithoutConversions) {
  for (const char* kind : {"standard", "bottleneck", "separable"}) {
    SCOPED_TRACE(kind);
    VariantSpec v = variant(kind);
    if (v.kind == "bottleneck") v.kind_parameters = BottleneckParameters{.ratio = 2};
    BlockSpec converted = boundary_block(Layout::channels_last);
    converted.dtype = DType::float64;
    BlockSpec plain = converted;
    plain.layout = Layout::channels_first;
    plain.layout_conversion = LayoutConversion::none;
    ReferenceBackend backend;
    const Graph gc = build_variant_graph(converted, v), gp = build_variant_graph(plain, v);
    Executor ec(gc, backend, true), ep(gp, backend, true);
    ModelState sc = ec.init_state(5), sp = ep.init_state(5);
    ASSERT_EQ(sc.params.size(), sp.params.size());
    for (size_t p = 0; p < sc.params.size(); ++p)
      ASSERT_EQ(download(backend, sc.params[p]), download(backend, sp.params[p])) << gc.params[p].name;
    Tensor x = make_tensor(backend.allocator(), gc.desc(gc.input), MemoryCategory::inputs);
    fill_uniform(backend, x, 17);
    Tensor dy = make_tensor(backend.allocator(), gc.desc(gc.output), MemoryCategory::inputs);
    fill_uniform(backend, dy, 19);
    EXPECT_EQ(download(backend, ec.forward(sc, x)), download(backend, ep.forward(sp, x)));
    ec.backward(sc, dy);
    ep.backward(sp, dy);
    for (size_t p = 0; p < sc.params.size(); ++p)
      EXPECT_EQ(download(backend, sc.grads[p]), download(backend, sp.grads[p])) << gc.params[p].name;
  }
}

// No FLOPs; each conversion reads and writes its tensor once; the first one's input needs no
// gradient, so only the output's conversion has a backward. What the conversions keep alive is
// the converted input, which the first conv saves instead of the block input.
TEST(LayoutConversion, CostsBytesAndTheSavedConvertedInputButNoFlops) {
  BlockSpec plain = boundary_block(Layout::channels_last);
  plain.layout_conversion = LayoutConversion::none;
  const BlockSpec converted = boundary_block(Layout::channels_last);
  const VariantAnalysis a = analyze_variant(build_variant_graph(plain, variant("standard")), true);
  const VariantAnalysis b = analyze_variant(build_variant_graph(converted, variant("standard")), true);
  EXPECT_EQ(a.flops.forward, b.flops.forward);
  EXPECT_EQ(a.flops.backward(), b.flops.backward());
  EXPECT_EQ(a.macs.forward, b.macs.forward);
  EXPECT_EQ(a.params, b.params);
  const int64_t in_bytes = 2 * 4 * 6 * 6 * 4, out_bytes = 2 * 8 * 6 * 6 * 4;  // float32
  EXPECT_EQ(b.bytes_forward - a.bytes_forward, 2 * in_bytes + 2 * out_bytes);
  EXPECT_EQ(b.bytes_backward - a.bytes_backward, 2 * out_bytes);
  EXPECT_EQ(b.memory.saved_bytes - a.memory.saved_bytes, in_bytes);
}

TEST(LayoutConversion, SpecFieldParsesSweepsAndRefusesOtherValues) {
  const Spec spec = parse_spec_text(R"(
blocks:
  - {name: b, batch: 2, in_channels: 4, out_channels: 8, size: 6, layout: channels_last, variants: [standard]}
sweep:
  layout_conversion: [none, boundary]
)",
                                    "ok.yaml");
  ASSERT_EQ(spec.blocks.size(), 2u);
  EXPECT_EQ(spec.blocks[0].layout_conversion, LayoutConversion::none);
  EXPECT_EQ(spec.blocks[1].layout_conversion, LayoutConversion::boundary);
  EXPECT_EQ(point_label(spec.blocks[1]), "layout_conversion=boundary");
  EXPECT_EQ(spec_error("blocks:\n  - {name: b, batch: 2, in_channels: 4, out_channels: 8, size: 6, "
                       "layout_conversion: edges, variants: [standard]}\n"),
            "bad.yaml:2:86: blocks[0].layout_conversion: unknown layout_conversion \"edges\" (expected none or "
            "boundary)");
}

TEST(LayoutConversion, CustomOpsMayNotTakeTheConversionsNamesAndOperandsMustShareALayout) {
  const std::string head =
      "blocks:\n  - name: b\n    batch: 2\n    in_channels: 4\n    out_channels: 4\n    size: 6\n"
      "    layout: channels_last\n    layout_conversion: boundary\n    variants:\n      - kind: custom\n"
      "        ops:\n";
  EXPECT_EQ(spec_error(head + "          - {op: relu, name: to_channels_first}\n"),
            "(no error)");  // parsing does not build the conversions; the variant builder refuses the name
  const Spec reserved = parse_spec_text(head + "          - {op: relu, name: to_channels_first}\n", "bad.yaml");
  try {
    build_variant_graph(reserved.blocks[0], reserved.blocks[0].variants[0]);
    ADD_FAILURE() << "a custom op named like a boundary conversion was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("blocks[0].variants[0].ops[0]: to_channels_first: the name of a layout "
                                         "conversion this block adds at its boundary"),
              std::string::npos)
        << e.what();
  }
  // A custom op converting one operand only: add refuses two layouts, pointing at the operand.
  EXPECT_EQ(spec_error(head + "          - {op: convert_layout, name: c}\n"
                              "          - {op: add, name: s, inputs: [c, input]}\n"),
            "bad.yaml:13:44: blocks[0].variants[0].ops[1].inputs[1]: \"input\" is channels_first but \"c\" is "
            "channels_last; add needs one memory layout (convert one operand with convert_layout)");
}

// End to end: a sweep over layout and layout_conversion, timed per op: the layouts table shows
// the two conversions' time apart, and the JSON says which rows convert.
TEST(LayoutConversionCli, TheLayoutsTableShowsWhatTheConversionsCost) {
  const std::string spec = testing::temp_path("boundary.yaml");
  {
    std::ofstream f(spec);
    f << "blocks:\n  - {name: b, batch: 2, in_channels: 8, out_channels: 16, size: 12, variants: [standard]}\n"
         "sweep:\n  layout: [channels_first, channels_last]\n  layout_conversion: [none, boundary]\n";
  }
  const std::string json = testing::temp_path("boundary.json");
  const testing::CliResult r = testing::run_cli("compare " + spec +
                                                " --device cpu --per-op 3 --min-time 0.01 --min-samples 3 "
                                                "--timeout 2 --json " +
                                                json + " --color never");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t table = r.out.find("b: layouts, channels_last / channels_first, train, device cpu\n");
  ASSERT_NE(table, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cl convert ms", table), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cl convert ms: the two conversions' time", table), std::string::npos) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(testing::read_file(json));
  int converting = 0;
  for (const nlohmann::json& row : doc["results"]) {
    const bool boundary = row["point"]["layout_conversion"] == "boundary" && row["layout"] == "channels_last";
    EXPECT_EQ(row.value("layout_conversion", "none"), boundary ? "boundary" : "none") << row["point_label"];
    if (!boundary) continue;
    ++converting;
    EXPECT_TRUE(row["op_times"].contains("to_channels_last")) << row["op_times"].dump();
    EXPECT_TRUE(row["op_times"].contains("to_channels_first")) << row["op_times"].dump();
  }
  EXPECT_EQ(converting, 1);
  // Read back, the file gives the same layouts table (the field survives the round trip).
  const testing::CliResult report = testing::run_cli("report " + json + " --color never");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("cl convert ms"), std::string::npos) << report.out;
  std::filesystem::remove(spec);
  std::filesystem::remove(json);
}

}  // namespace
}  // namespace convbench

// Mixed precision's graph (variants/autocast_graph.hpp): where torch.autocast's rules put casts,
// which dtype each op runs in on each device, what stays float32, and the located errors of the
// `precision` field (beside a dtype; on an op without an autocast rule).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "memory_expectations.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "analysis/memory_model.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/reference/reference_backend.hpp"
#include "ops/autograd_rules.hpp"
#include "ops/graph_builder.hpp"
#include "ops/op_registry.hpp"
#include "runtime/executor.hpp"
#include "runtime/host_io.hpp"
#include "spec/spec_loader.hpp"
#include "util/input_error.hpp"
#include "variants/autocast_graph.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

ConvAttrs conv3x3(int64_t out_channels, int dims) {
  ConvAttrs a;
  a.out_channels = out_channels;
  a.kernel.assign(static_cast<size_t>(dims), 3);
  a.stride.assign(static_cast<size_t>(dims), 1);
  a.padding.assign(static_cast<size_t>(dims), 1);
  a.dilation.assign(static_cast<size_t>(dims), 1);
  return a;
}

// conv -> batch_norm -> relu, added to the block input: a residual unit in float32.
Graph residual_unit() {
  GraphBuilder b("unit", TensorDesc{{2, 4, 6, 6}, DType::float32, Layout::channels_first});
  const int c = b.conv("conv", b.input(), conv3x3(4, 2));
  const int n = b.batch_norm("bn", c);
  const int r = b.relu("act", n);
  return b.finish(b.add("add", r, b.input()));
}

std::vector<std::string> op_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Op& op : g.ops) names.push_back(op.name);
  return names;
}

const Op& op_named(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops)
    if (op.name == name) return op;
  throw std::logic_error("no op " + name);
}

DType output_dtype(const Graph& g, const std::string& op) { return g.desc(op_named(g, op).output).dtype; }

TEST(AutocastGraph, CastsWhereAutocastCastsAndKeepsMasterWeightsFloat32) {
  const Graph g = apply_autocast(residual_unit(), Precision::amp_bfloat16, AutocastDevice::cpu, nullptr);
  // The conv's input is cast down; the residual add promotes the bfloat16 branch to the float32
  // shortcut (PyTorch's type promotion), so its first operand is cast up.
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"conv.cast", "conv", "bn", "act", "add.cast0", "add"}));
  EXPECT_EQ(op_named(g, "conv.cast").cast_to, DType::bfloat16);
  EXPECT_EQ(output_dtype(g, "conv"), DType::bfloat16);
  EXPECT_EQ(op_named(g, "conv").param_cast, DType::bfloat16);
  EXPECT_EQ(output_dtype(g, "bn"), DType::bfloat16);  // follows its input, float32 statistics
  EXPECT_FALSE(op_named(g, "bn").param_cast.has_value());
  EXPECT_EQ(output_dtype(g, "act"), DType::bfloat16);
  EXPECT_EQ(op_named(g, "add.cast0").cast_to, DType::float32);
  EXPECT_EQ(g.desc(g.output).dtype, DType::float32);
  for (const Param& p : g.params) EXPECT_EQ(p.desc.dtype, DType::float32) << p.name;
  for (const Param& b : g.buffers) EXPECT_EQ(b.desc.dtype, DType::float32) << b.name;
  for (const TensorDesc& aux : aux_tensors(g, op_named(g, "bn"))) EXPECT_EQ(aux.dtype, DType::float32);
  EXPECT_EQ(g.precision, Precision::amp_bfloat16);
  // A cast keeps nothing for backward: ToCopyBackward only casts the gradient back.
  const SavedTensors s = saved_tensors(op_named(g, "conv.cast"), {false});
  EXPECT_TRUE(s.inputs.empty());
  EXPECT_FALSE(s.output);
}

TEST(AutocastGraph, PlainPrecisionLeavesTheGraphAsItIs) {
  const Graph plain = residual_unit();
  const Graph g = apply_autocast(plain, Precision::plain, AutocastDevice::cpu, nullptr);
  EXPECT_EQ(op_names(g), op_names(plain));
  EXPECT_EQ(g.precision, Precision::plain);
}

// The devices' lists differ: CPU autocast runs 3-D pools in float32 and lets group_norm follow its
// input; CUDA autocast runs group_norm (and upsample) in float32 and lets pools follow.
TEST(AutocastGraph, TheDevicesListsDiffer) {
  GraphBuilder b("pools", TensorDesc{{2, 4, 4, 6, 6}, DType::float32, Layout::channels_first});
  const int c = b.conv("conv", b.input(), conv3x3(4, 3));
  const int n = b.group_norm("gn", c, 2);
  PoolAttrs pool;
  pool.kernel = pool.stride = {2, 2, 2};
  pool.padding = {0, 0, 0};
  const Graph plain = b.finish(b.max_pool("pool", n, pool));

  const Graph cpu = apply_autocast(plain, Precision::amp_float16, AutocastDevice::cpu, nullptr);
  EXPECT_EQ(op_names(cpu), (std::vector<std::string>{"conv.cast", "conv", "gn", "pool.cast", "pool"}));
  EXPECT_EQ(output_dtype(cpu, "gn"), DType::float16);
  EXPECT_EQ(output_dtype(cpu, "pool"), DType::float32);

  const Graph cuda = apply_autocast(plain, Precision::amp_float16, AutocastDevice::cuda, nullptr);
  EXPECT_EQ(op_names(cuda), (std::vector<std::string>{"conv.cast", "conv", "gn.cast", "gn", "pool"}));
  EXPECT_EQ(output_dtype(cuda, "gn"), DType::float32);
  EXPECT_EQ(output_dtype(cuda, "pool"), DType::float32);
}

// A network's recompute segments name op ranges; the casts inserted before an op belong to it.
TEST(AutocastGraph, SegmentsMoveWithTheirOps) {
  std::vector<RecomputeSegment> slots = {{"first", 0, 3}, {"second", 3, 4}};
  apply_autocast(residual_unit(), Precision::amp_bfloat16, AutocastDevice::cpu, &slots);
  EXPECT_EQ(slots[0].first_op, 0);
  EXPECT_EQ(slots[0].end_op, 4);  // conv.cast, conv, bn, act
  EXPECT_EQ(slots[1].first_op, 4);
  EXPECT_EQ(slots[1].end_op, 6);  // add.cast0, add
}

// The rule table lives in the op definitions: every op a spec or a transform makes has a class,
// except folded_conv, whose kernel composition has no PyTorch op for autocast to classify, and
// layer_scale, whose float32 parameter promotes a low-precision input to float32 in PyTorch (a
// dtype change the transform does not model yet: such a variant is refused, not mis-modelled).
TEST(AutocastGraph, EveryOpButFoldedConvAndLayerScaleHasARule) {
  std::set<std::string> without;
  for (const OpDefinition* d : op_definitions())
    if (!d->autocast) without.insert(std::string(d->name));
  EXPECT_EQ(without, (std::set<std::string>{"folded_conv", "layer_scale"}));
}

// What an AMP step keeps, tensor by tensor: the conv's bfloat16 copies of its input and weight
// (not its bias: PyTorch's convolution saves the weight it was given, and the cached bias copy
// goes when the forward leaves autocast), batch norm's bfloat16 input with float32 statistics,
// ReLU's bfloat16 output. Parameters and their gradients stay float32.
TEST(AutocastGraph, TheMemoryModelCountsCastCopiesAndHalfSavedTensors) {
  const Graph g = apply_autocast(residual_unit(), Precision::amp_bfloat16, AutocastDevice::cpu, nullptr);
  const MemoryPrediction p = predict_memory(g, true);
  const int64_t activation = 2 * 4 * 6 * 6 * 2;  // one bfloat16 activation
  std::vector<std::pair<std::string, int64_t>> saved;
  for (const SavedTensorFacts& f : p.saved)
    if (f.counted) saved.emplace_back(f.what, f.bytes);
  EXPECT_EQ(saved, (std::vector<std::pair<std::string, int64_t>>{{"output of conv.cast", activation},
                                                                 {"bfloat16 copy of conv.weight", 4 * 4 * 9 * 2},
                                                                 {"output of conv", activation},
                                                                 {"mean of bn", 16},
                                                                 {"inverse std of bn", 16},
                                                                 {"output of act", activation}}));
  EXPECT_EQ(p.saved_bytes, 3 * activation + 288 + 32);
  EXPECT_EQ(p.parameter_bytes, (4 * 4 * 9 + 4 + 4 + 4) * 4);
  EXPECT_EQ(p.gradient_bytes, p.parameter_bytes);
}

// On the reference backend the measured step equals the prediction, in training and inference,
// under both modes.
TEST(AutocastGraph, ReferenceMeasuredEqualsPredicted) {
  ReferenceBackend reference;
  for (Precision mode : {Precision::amp_bfloat16, Precision::amp_float16})
    for (bool training : {true, false}) {
      SCOPED_TRACE(std::string(to_string(mode)) + (training ? " train" : " infer"));
      testing::expect_measured_equals_predicted(
          reference, apply_autocast(residual_unit(), mode, AutocastDevice::cpu, nullptr), training);
    }
}

// The AMP step's gradients are the float32 step's up to the low dtype's rounding: bfloat16 keeps
// 8 bits of mantissa, so a relative error of a few 2^-8 on each float32 parameter gradient.
TEST(AutocastGraph, GradientsFollowTheFloat32StepWithinTheLowDtypesRounding) {
  ReferenceBackend reference;
  const Graph plain = residual_unit();
  std::vector<std::vector<double>> grads[2];
  for (int amp = 0; amp < 2; ++amp) {
    const Graph g = amp ? apply_autocast(plain, Precision::amp_bfloat16, AutocastDevice::cpu, nullptr) : plain;
    Executor ex(g, reference, true);
    ModelState state = ex.init_state(7);
    Tensor x = make_tensor(reference.allocator(), g.desc(g.input), MemoryCategory::inputs);
    std::vector<double> xs(static_cast<size_t>(x.desc.numel()));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.37 * static_cast<double>(i));
    upload(reference, x, xs);
    const Tensor y = ex.forward(state, x);
    Tensor dy = make_tensor(reference.allocator(), y.desc, MemoryCategory::inputs);
    std::vector<double> dys(static_cast<size_t>(dy.desc.numel()));
    for (size_t i = 0; i < dys.size(); ++i) dys[i] = std::cos(0.11 * static_cast<double>(i));
    upload(reference, dy, dys);
    ex.backward(state, dy);
    for (const Tensor& t : state.grads) {
      EXPECT_EQ(t.desc.dtype, DType::float32);
      grads[amp].push_back(download(reference, t));
    }
  }
  ASSERT_EQ(grads[0].size(), grads[1].size());
  for (size_t p = 0; p < grads[0].size(); ++p) {
    double norm = 0, diff = 0;
    for (size_t i = 0; i < grads[0][p].size(); ++i) {
      norm += grads[0][p][i] * grads[0][p][i];
      diff += (grads[0][p][i] - grads[1][p][i]) * (grads[0][p][i] - grads[1][p][i]);
    }
    SCOPED_TRACE(plain.params[p].name);
    EXPECT_GT(diff, 0.0);  // the low dtype did round
    // Relative to the gradient, or absolute where it is below 1: the conv's bias feeds a batch
    // norm, so its exact gradient is 0 and what remains is the bfloat16 rounding of its sum.
    EXPECT_LT(std::sqrt(diff), 0.05 * std::max(std::sqrt(norm), 1.0));
  }
}

// A cast's kernels on the cpu backend round as the reference's do (to nearest even), both ways; and
// the cpu backend, which has no fast float16 convolutions (oneDNN 2.6 on x86), refers an
// amp_float16 step to the reference backend (its amp_bfloat16 steps: cpu_backend_test.cpp).
TEST(AutocastGraph, CpuCastsAsTheReferenceDoesAndRefersFloat16StepsToIt) {
  const Graph g = apply_autocast(residual_unit(), Precision::amp_bfloat16, AutocastDevice::cpu, nullptr);
  CpuBackend cpu;
  ReferenceBackend reference;
  const Graph f16 = apply_autocast(residual_unit(), Precision::amp_float16, AutocastDevice::cpu, nullptr);
  const auto why = cpu.unsupported(f16, f16.ops.at(0));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(
      *why,
      "cpu backend: oneDNN 2.6 has no optimised float16 convolution on this CPU, so precision amp_float16 runs on "
      "--device reference");
  for (DType to : {DType::bfloat16, DType::float16}) {
    Op cast;
    cast.kind = OpKind::cast;
    cast.name = "cast";
    cast.cast_to = to;
    const TensorDesc from{{2, 3, 5, 7}, DType::float32, Layout::channels_last};
    TensorDesc half = from;
    half.dtype = to;
    std::vector<double> xs(static_cast<size_t>(from.numel()));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(1.7 * static_cast<double>(i)) * 300.0;
    std::vector<std::vector<double>> outs, grads;
    for (Backend* backend : std::vector<Backend*>{&cpu, &reference}) {
      Tensor x = make_tensor(backend->allocator(), from, MemoryCategory::inputs);
      upload(*backend, x, xs);
      Tensor y = make_tensor(backend->allocator(), half, MemoryCategory::temporaries);
      backend->forward(ForwardCall{.graph = g, .op = cast, .inputs = {&x}, .output = &y, .training = true});
      outs.push_back(download(*backend, y));
      Tensor dx = make_tensor(backend->allocator(), from, MemoryCategory::temporaries);
      backend->backward(
          BackwardCall{.graph = g, .op = cast, .inputs = {nullptr}, .grad_output = &y, .grad_inputs = {&dx}});
      grads.push_back(download(*backend, dx));
    }
    EXPECT_EQ(outs[0], outs[1]) << to_string(to);
    EXPECT_EQ(grads[0], grads[1]) << to_string(to);
    EXPECT_NE(outs[0], xs) << to_string(to);  // it did round
  }
}

const char* kAmpBlock =
    "name: amp\n"
    "blocks:\n"
    "  - name: b\n"
    "    batch: 2\n"
    "    in_channels: 4\n"
    "    out_channels: 4\n"
    "    size: 6\n"
    "    residual: true\n"
    "    precision: amp_bfloat16\n"
    "    variants:\n"
    "      - standard\n"
    "      - {kind: standard, name: fp32, precision: plain}\n";

TEST(AutocastGraph, ASpecChoosesThePrecisionPerBlockAndVariant) {
  const Spec s = parse_spec_text(kAmpBlock, "amp.yaml");
  const BlockSpec& b = s.blocks.at(0);
  const Graph amp = build_variant_graph(b, b.variants.at(0));
  const Graph fp32 = build_variant_graph(b, b.variants.at(1));
  EXPECT_EQ(amp.precision, Precision::amp_bfloat16);
  EXPECT_EQ(fp32.precision, Precision::plain);
  EXPECT_GT(amp.ops.size(), fp32.ops.size());  // the casts
  EXPECT_EQ(precision_of(b, b.variants.at(0)).key_path, "blocks[0].precision");
}

// compare and advise on the cuda device build AMP variants with CUDA autocast's rules: group norm
// runs in float32 there (a cast up before it), where CPU autocast lets it follow its half input.
TEST(AutocastGraph, RowsOnTheCudaDeviceFollowCudasRules) {
  Spec s = parse_spec_text(kAmpBlock, "amp.yaml");
  s.blocks.at(0).norm = NormKind::group;
  s.blocks.at(0).norm_groups = 2;
  auto group_norm_input = [](const Spec& spec) {
    const BlockSpec& b = spec.blocks.at(0);
    const Graph g = build_variant_graph(b, b.variants.at(0));
    for (const Op& op : g.ops)
      if (op.kind == OpKind::group_norm) return g.desc(op.inputs.at(0)).dtype;
    throw std::logic_error("no group norm");
  };
  EXPECT_EQ(group_norm_input(spec_on_device(s, "cpu")), DType::bfloat16);
  EXPECT_EQ(group_norm_input(spec_on_device(s, "reference")), DType::bfloat16);
  const Spec on_cuda = spec_on_device(s, "cuda");
  EXPECT_EQ(on_cuda.blocks.at(0).autocast_device, AutocastDevice::cuda);
  EXPECT_EQ(group_norm_input(on_cuda), DType::float32);
}

TEST(AutocastGraph, PrecisionIsSwept) {
  const Spec s = parse_spec_text(
      "name: amp\n"
      "blocks:\n"
      "  - {name: b, batch: 2, in_channels: 4, out_channels: 4, size: 6, variants: [standard]}\n"
      "sweep:\n"
      "  precision: [plain, amp_float16]\n",
      "amp.yaml");
  ASSERT_EQ(s.blocks.size(), 2u);
  EXPECT_EQ(s.blocks[0].precision.precision, Precision::plain);
  EXPECT_EQ(s.blocks[1].precision.precision, Precision::amp_float16);
}

std::string build_error(const std::string& spec) {
  try {
    const Spec s = parse_spec_text(spec, "amp.yaml");
    for (const BlockSpec& b : s.blocks)
      for (const VariantSpec& v : b.variants) build_variant_graph(b, v);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(AutocastGraph, ADtypeBesideAnAmpModeIsALocatedError) {
  EXPECT_EQ(build_error("name: amp\n"
                        "blocks:\n"
                        "  - name: b\n"
                        "    batch: 2\n"
                        "    in_channels: 4\n"
                        "    out_channels: 4\n"
                        "    size: 6\n"
                        "    dtype: float16\n"
                        "    precision: amp_float16\n"
                        "    variants: [standard]\n"),
            "amp.yaml:9:16: blocks[0].precision: precision amp_float16 keeps float32 weights and casts per op as "
            "torch.autocast does; it cannot be combined with dtype float16 (given at blocks[0].dtype, line 8): "
            "remove one of them");
}

TEST(AutocastGraph, AnOpWithoutARuleIsALocatedError) {
  EXPECT_EQ(build_error("name: amp\n"
                        "blocks:\n"
                        "  - name: b\n"
                        "    batch: 2\n"
                        "    in_channels: 8\n"
                        "    out_channels: 8\n"
                        "    size: 6\n"
                        "    variants:\n"
                        "      - {kind: branches, name: loop, count: 2}\n"
                        "      - {kind: folded, of: loop, precision: amp_bfloat16}\n"),
            "amp.yaml:10:45: blocks[0].variants[1].precision: precision amp_bfloat16: cat (folded_conv) has no "
            "autocast rule: torch.autocast's op lists do not say which dtype it runs in; use precision: plain for "
            "this variant (variant \"online-loop\")");
}

TEST(AutocastGraph, AnUnknownPrecisionListsTheModes) {
  const std::string e = build_error(
      "name: amp\n"
      "blocks:\n"
      "  - {name: b, batch: 2, in_channels: 4, out_channels: 4, size: 6, precision: amp_fp16, variants: [standard]}\n");
  EXPECT_NE(e.find("amp.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("blocks[0].precision"), std::string::npos) << e;
  EXPECT_NE(e.find("amp_bfloat16"), std::string::npos) << e;
}

// Reports: variants that differ in precision get a precision column; a table whose rows all run
// one AMP mode names it in its title, where a float32 table names its dtype.
TEST(AutocastCli, TablesShowThePrecisionWhereItMatters) {
  const std::string spec = testing::temp_path("amp-table.yaml");
  std::ofstream(spec) << kAmpBlock;
  const auto mixed = testing::run_cli("analyze " + spec);
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_NE(mixed.out.find("b: input 2x4x6x6, {amp_bfloat16,float32}, channels_first, train"), std::string::npos)
      << mixed.out;
  EXPECT_NE(mixed.out.find("variant          precision"), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("fp32             plain"), std::string::npos) << mixed.out;
  const std::string amp_only = testing::temp_path("amp-only.yaml");
  std::string text = kAmpBlock;
  text.erase(text.find("      - {kind: standard, name: fp32"));
  std::ofstream(amp_only) << text;
  const auto one = testing::run_cli("analyze " + amp_only);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("b: input 2x4x6x6, amp_bfloat16, channels_first, train"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("precision "), std::string::npos) << one.out;
  std::filesystem::remove(spec);
  std::filesystem::remove(amp_only);
}

}  // namespace
}  // namespace convbench

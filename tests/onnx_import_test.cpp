// ONNX files as blocks ({kind: onnx, file}): the MyBlock built here with the ONNX
// project's own protobuf classes, read back as the same graph as its custom-op twin (same graph
// hash, counts and memory), and hostile files refused with exit 2, naming the file and the node.
#ifdef CONVBENCH_WITH_ONNX

#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "onnx/onnx_graph.hpp"
#include "ops/param_values.hpp"
#include "spec/spec_loader.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

using testing::run_cli;
using testing::temp_path;

void add_weight(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (const int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  t->set_raw_data(std::string(static_cast<size_t>(n) * 4, '\0'));
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& type, const std::string& name,
                          std::vector<std::string> in, std::vector<std::string> out) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(type);
  n->set_name(name);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (const int64_t x : v) a->add_ints(x);
}

void integer(onnx::NodeProto* n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void value_info(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (const int64_t d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (d > 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param("batch");  // symbolic, as a dynamic-batch export writes it
  }
}

// Distinct values in every initializer (element i of initializer k is k + i / 2^20: exact in
// float32), so that a value taken from the wrong tensor or position shows.
void number_initializers(onnx::ModelProto& m) {
  for (int k = 0; k < m.graph().initializer_size(); ++k) {
    onnx::TensorProto* t = m.mutable_graph()->mutable_initializer(k);
    std::string& raw = *t->mutable_raw_data();
    for (size_t i = 0; i < raw.size() / 4; ++i) {
      const float v = static_cast<float>(k) + static_cast<float>(i) / (1 << 20);
      std::memcpy(raw.data() + 4 * i, &v, 4);
    }
  }
}

// The values initializer `name` holds, as read back from the model.
std::vector<double> initializer_values(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) {
      std::vector<double> v(t.raw_data().size() / 4);
      for (size_t i = 0; i < v.size(); ++i) {
        float f;
        std::memcpy(&f, t.raw_data().data() + 4 * i, 4);
        v[i] = f;
      }
      return v;
    }
  return {};
}

// The MyBlock (24 -> 48 channels, 3-D), as torch.onnx.export writes it in training mode.
onnx::ModelProto my_block() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("convbench test");
  m.add_opset_import()->set_version(17);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("MyBlock");
  value_info(g.add_input(), "x", {0, 24, 8, 8, 8});
  value_info(g.add_output(), "y", {0, 48, 8, 8, 8});
  add_weight(g, "conv1.weight", {48, 24, 3, 3, 3});
  add_weight(g, "conv2.weight", {48, 12, 3, 3, 3});
  add_weight(g, "skip.weight", {48, 24, 1, 1, 1});
  for (const char* bn : {"bn1", "bn2"})
    for (const char* p : {"weight", "bias", "running_mean", "running_var"})
      add_weight(g, std::string(bn) + "." + p, {48});
  auto conv = [&](const std::string& name, const std::string& in, const std::string& out, int64_t k, int64_t groups) {
    onnx::NodeProto* n = add_node(g, "Conv", "/" + name + "/Conv", {in, name + ".weight"}, {out});
    ints(n, "kernel_shape", {k, k, k});
    ints(n, "pads", std::vector<int64_t>(6, k / 2));
    ints(n, "strides", {1, 1, 1});
    if (groups > 1) integer(n, "group", groups);
  };
  auto bn = [&](const std::string& name, const std::string& in, const std::string& out) {
    add_node(g, "BatchNormalization", "/" + name + "/BatchNormalization",
             {in, name + ".weight", name + ".bias", name + ".running_mean", name + ".running_var"},
             {out, out + "_mean", out + "_var"});
  };
  conv("conv1", "x", "c1", 3, 1);
  bn("bn1", "c1", "b1");
  add_node(g, "Relu", "/Relu", {"b1"}, {"r1"});
  conv("conv2", "r1", "c2", 3, 4);
  bn("bn2", "c2", "b2");
  conv("skip", "x", "s", 1, 1);
  add_node(g, "Add", "/Add", {"b2", "s"}, {"a"});
  add_node(g, "Relu", "/Relu_1", {"a"}, {"y"});
  return m;
}

std::string write_model(const onnx::ModelProto& m, const std::string& name) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

// A spec with the ONNX variant and, beside it, the same block written as custom ops.
std::string spec_for(const std::string& onnx_file, int64_t in_channels = 24) {
  const std::string path = temp_path("onnx_spec.yaml");
  std::ofstream(path) << "blocks:\n  - name: mine\n    batch: 2\n    dims: 3\n    in_channels: " << in_channels
                      << "\n    out_channels: 48\n    size: 8\n    bias: false\n    variants:\n"
                      << "      - {kind: onnx, name: from-onnx, file: " << onnx_file << "}\n"
                      << "      - kind: custom\n        name: by-hand\n        ops:\n"
                      << "          - {op: conv, name: conv1, inputs: input, out_channels: 48, kernel: 3}\n"
                      << "          - {op: batch_norm, name: bn1}\n"
                      << "          - {op: relu, name: Relu}\n"
                      << "          - {op: conv, name: conv2, kernel: 3, groups: 4}\n"
                      << "          - {op: batch_norm, name: bn2}\n"
                      << "          - {op: conv, name: skip, inputs: input, out_channels: 48, kernel: 1}\n"
                      << "          - {op: add, name: Add, inputs: [bn2, skip]}\n"
                      << "          - {op: relu, name: Relu_1}\n";
  return path;
}

TEST(OnnxImport, MyBlockIsTheGraphOfItsCustomOpTwin) {
  const std::string model = write_model(my_block(), "myblock.onnx");
  const auto r = run_cli("analyze " + spec_for(model) + " --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(rows.size(), 2u);
  // The same ops with the same names, fields and shapes: the same graph, hence the same counts.
  EXPECT_EQ(rows[0]["graph_hash"], rows[1]["graph_hash"]);
  EXPECT_EQ(rows[0]["params"], 48000);  // PyTorch's sum of MyBlock's parameters
  for (const char* key : {"params", "macs", "flops", "bytes", "memory", "output_shape"})
    EXPECT_EQ(rows[0][key], rows[1][key]) << key;
  std::filesystem::remove(model);
}

// A spec with the group norm fixture's block and `onnx_file` as its variant.
std::string spec_for_gn(const std::string& onnx_file) {
  const std::string spec = temp_path("gn-variant.yaml");
  std::ofstream(spec) << "blocks:\n  - {name: gn, batch: 2, dims: 2, in_channels: 2, out_channels: 4, size: 4, "
                         "variants: [{kind: onnx, file: "
                      << onnx_file << "}]}\n";
  return spec;
}

// The starting values of the graph the spec's first variant builds, by parameter or buffer name.
std::map<std::string, std::vector<double>> starting_values(const std::string& spec_file) {
  const Spec spec = load_spec_file(spec_file);
  const Graph g = build_variant_graph(spec.blocks.at(0), spec.blocks.at(0).variants.at(0));
  const GraphValues v = initial_graph_values(g, 7);
  std::map<std::string, std::vector<double>> out;
  for (size_t i = 0; i < g.params.size(); ++i) out[g.params[i].name] = v.params[i];
  for (size_t i = 0; i < g.buffers.size(); ++i) out[g.buffers[i].name] = v.buffers[i];
  return out;
}

TEST(OnnxImport, TheInitializersAreTheStartingValues) {
  onnx::ModelProto m = my_block();
  number_initializers(m);
  const std::string model = write_model(m, "myblock-values.onnx");
  const auto values = starting_values(spec_for(model));
  ASSERT_EQ(values.size(), 11u);  // 3 conv weights, 2 x (weight, bias, running mean, running var)
  for (const auto& [name, v] : values) EXPECT_EQ(v, initializer_values(m, name)) << name;

  // The same values in float16 (raw) and bfloat16 (typed int32 bits), and in an external data
  // file beside the model, as torch.onnx.export writes a model over 2 GiB.
  onnx::ModelProto half = m;
  auto* w = half.mutable_graph()->mutable_initializer(3);  // bn1.weight: 3, 3 + 2^-20, ...
  w->set_data_type(onnx::TensorProto::FLOAT16);
  w->mutable_raw_data()->assign(std::string("\x00\x42\x00\xc0", 4) + std::string(92, '\0'));  // 3, -2, 0...
  auto* b = half.mutable_graph()->mutable_initializer(4);                                     // bn1.bias
  b->set_data_type(onnx::TensorProto::BFLOAT16);
  b->clear_raw_data();
  b->add_int32_data(0x4040);  // 3.0
  b->add_int32_data(0xbf80);  // -1.0
  for (int i = 2; i < 48; ++i) b->add_int32_data(0);
  auto* c = half.mutable_graph()->mutable_initializer(2);  // skip.weight, 48 x 24 floats
  const std::string data = c->raw_data();
  std::ofstream(temp_path("skip.bin"), std::ios::binary) << std::string(16, 'x') << data;
  c->clear_raw_data();
  c->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"location", std::filesystem::path(temp_path("skip.bin")).filename()},
        {"offset", "16"},
        {"length", std::to_string(data.size())}}) {
    auto* e = c->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  const auto mixed = starting_values(spec_for(write_model(half, "myblock-half.onnx")));
  EXPECT_EQ(std::vector<double>(mixed.at("bn1.weight").begin(), mixed.at("bn1.weight").begin() + 3),
            (std::vector<double>{3, -2, 0}));
  EXPECT_EQ(std::vector<double>(mixed.at("bn1.bias").begin(), mixed.at("bn1.bias").begin() + 3),
            (std::vector<double>{3, -1, 0}));
  EXPECT_EQ(mixed.at("skip.weight"), initializer_values(m, "skip.weight"));
  // An external file shorter than the offset plus the tensor is refused, naming the tensor.
  std::ofstream(temp_path("skip.bin"), std::ios::binary) << data;
  const auto r = run_cli("validate " + spec_for(temp_path("myblock-half.onnx")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds fewer bytes than offset 16"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(Conv \"/skip/Conv\").input[1] (skip.weight)"), std::string::npos) << r.err;
  std::filesystem::remove(temp_path("skip.bin"));
  std::filesystem::remove(model);
}

// A classifier head as ONNX writes it: Gemm with the weight stored (in, out) (transB 0) and
// MatMul, both taken as nn.Linear's (out, in).
TEST(OnnxImport, ALinearWeightStoredInputMajorIsTransposed) {
  for (const std::string type : {"Gemm", "MatMul"}) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    onnx::GraphProto& g = *m.mutable_graph();
    value_info(g.add_input(), "x", {0, 3, 4, 4});
    value_info(g.add_output(), "y", {0, 2});
    add_weight(g, "head.weight", {3, 2});  // (in, out)
    add_node(g, "GlobalAveragePool", "/pool", {"x"}, {"p"});
    add_node(g, "Flatten", "/flatten", {"p"}, {"f"});
    add_node(g, type, "/head/" + type, {"f", "head.weight"}, {"y"});
    number_initializers(m);  // (in, out): 0, 2^-20, ..., 5 x 2^-20
    const std::string model = write_model(m, "head.onnx");
    const std::string spec = temp_path("head.yaml");
    std::ofstream(spec) << "blocks:\n  - {name: head, batch: 2, dims: 2, in_channels: 3, out_channels: 2, size: 4, "
                           "variants: [{kind: onnx, file: "
                        << model << "}]}\n";
    const std::vector<double> w = starting_values(spec).at("head.weight");
    const double u = 1.0 / (1 << 20);
    EXPECT_EQ(w, (std::vector<double>{0, 2 * u, 4 * u, 1 * u, 3 * u, 5 * u})) << type;  // (out, in)
  }
}

// `convbench analyze block.onnx --input NxCxS...`: the model file alone is the spec of its block.
TEST(OnnxImport, AModelFileIsASpecOfItsOneBlock) {
  const std::string model = write_model(my_block(), "myblock.onnx");
  const auto alone = run_cli("analyze " + model + " --input 2x24x8x8x8 --json -");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const auto by_spec = run_cli("analyze " + spec_for(model) + " --json -");
  ASSERT_EQ(by_spec.exit_code, 0) << by_spec.err;
  const auto a = nlohmann::json::parse(alone.out), s = nlohmann::json::parse(by_spec.out);
  ASSERT_EQ(a["results"].size(), 1u);
  EXPECT_EQ(a["results"][0]["block"], "convbench_test_" + std::to_string(::getpid()) + "_myblock");
  for (const char* key : {"graph_hash", "params", "macs", "flops", "memory", "output_shape"})
    EXPECT_EQ(a["results"][0][key], s["results"][0][key]) << key;

  // The input: where the model leaves the batch open, --input must give it; what it gives must
  // agree with the dims the model fixes. Each refusal: exit 2 at --input, no output written.
  const std::string out = temp_path("model-file.json");
  for (const auto& [input, words] : std::vector<std::pair<std::string, std::string>>{
           {"", "is needed: the model's input is ?x24x8x8x8"},
           {" --input 2x16x8x8x8", "disagrees with the model's input ?x24x8x8x8 in dim 1"},
           {" --input 2x24x8x8", "has 4 dims, the model's input 5"},
           {" --input 2x24x8xx8", "is not N x C x sizes"}}) {
    const auto r = run_cli("analyze " + model + input + " --json " + out);
    EXPECT_EQ(r.exit_code, 2) << input;
    EXPECT_NE(r.err.find("--input: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << input;
  }
  // A model that fixes every dim needs no --input; a spec takes none.
  onnx::ModelProto fixed = my_block();
  fixed.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(3);
  const auto f = run_cli("analyze " + write_model(fixed, "fixed.onnx") + " --json -");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out)["results"][0]["input_shape"], (std::vector<int>{3, 24, 8, 8, 8}));
  const auto spec = run_cli("analyze " + spec_for(model) + " --input 2x24x8x8x8");
  EXPECT_EQ(spec.exit_code, 2);
  EXPECT_NE(spec.err.find("--input: gives the input shape of a model file"), std::string::npos) << spec.err;
  std::filesystem::remove(model);
}

// nn.GroupNorm as PyTorch's exporter writes it (tests/data/onnx/make_group_norm_fixture.py):
// Reshape to groups, InstanceNormalization, Reshape back, Mul, Add: one group_norm op, whose
// weight and bias are the module's (1, 2, 3, 4 and 5, 6, 7, 8), with the graph of its twin.
TEST(OnnxImport, PyTorchsGroupNormIsOneOpWithTheModulesWeights) {
  const std::string file = std::string(CONVBENCH_SOURCE_DIR) + "/tests/data/onnx/group-norm-17.onnx";
  const std::string spec = temp_path("gn.yaml");
  std::ofstream(spec) << "blocks:\n  - {name: gn, batch: 2, dims: 2, in_channels: 2, out_channels: 4, size: 4, "
                         "bias: false, variants: [{kind: onnx, file: "
                      << file
                      << "}, {kind: custom, name: twin, ops: [{op: conv, name: conv, out_channels: 4, kernel: 3}, "
                         "{op: group_norm, name: gn, norm_groups: 2}, {op: relu, name: Relu}]}]}\n";
  const auto values = starting_values(spec);
  EXPECT_EQ(values.at("gn.weight"), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(values.at("gn.bias"), (std::vector<double>{5, 6, 7, 8}));
  EXPECT_EQ(values.at("conv.weight").at(71), 71.0 / 64);
  const auto r = run_cli("analyze " + spec + " --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["results"];
  EXPECT_EQ(rows[0]["graph_hash"], rows[1]["graph_hash"]);

  // The pattern only: a Reshape elsewhere is refused at its node. A Mul that nothing the output
  // needs reads (the Add reads the Mul's operand instead) is dead code, not part of the block: the
  // norm keeps the Add's bias and no weight of the Mul.
  onnx::ModelProto m;
  {
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
  }
  auto node_index = [&](const std::string& type) {
    for (int i = 0; i < m.graph().node_size(); ++i)
      if (m.graph().node(i).op_type() == type) return i;
    return -1;
  };
  onnx::ModelProto shared = m;
  const int mul = node_index("Mul"), add = node_index("Add");
  ASSERT_GE(mul, 0);
  ASSERT_GE(add, 0);
  // The Add reads the Mul's operand instead of the Mul's result: the operand has two readers.
  shared.mutable_graph()->mutable_node(add)->set_input(0, m.graph().node(mul).input(0));
  const auto s = run_cli("validate " + spec_for_gn(write_model(shared, "gn-shared.onnx")) + " --resolved-json -");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out.find("\"mul\""), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find("layer_scale"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("\"group_norm\""), std::string::npos) << s.out;
  onnx::ModelProto other = m;
  const int reshape = node_index("Reshape");
  onnx::TensorProto* odd = other.mutable_graph()->add_initializer();  // 3 groups of 4 channels
  odd->set_name("odd_groups");
  odd->set_data_type(onnx::TensorProto::INT64);
  odd->add_dims(3);
  for (const int64_t v : {0, 3, -1}) odd->add_int64_data(v);
  other.mutable_graph()->mutable_node(reshape)->set_input(1, "odd_groups");
  const auto o = run_cli("validate " + spec_for_gn(write_model(other, "gn-reshape.onnx")));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("a Reshape convbench reads only as part of PyTorch's group norm"), std::string::npos) << o.err;
}

// Each hostile file: exit 2, one message naming the file and what in it is at fault.
void expect_refused(const onnx::ModelProto& m, const std::string& words, const std::string& where) {
  const std::string model = write_model(m, "hostile.onnx");
  const auto r = run_cli("validate " + spec_for(model));
  EXPECT_EQ(r.exit_code, 2) << words << ": " << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hostile.onnx"), std::string::npos) << r.err;
  std::filesystem::remove(model);
}

onnx::ModelProto changed(const std::function<void(onnx::ModelProto&)>& change) {
  onnx::ModelProto m = my_block();
  change(m);
  return m;
}

TEST(OnnxImport, HostileFilesAreLocatedRefusals) {
  // Not a model at all, and a model cut short.
  for (const std::string& bytes :
       {std::string("not a protobuf \xff\xff\xff", 18), my_block().SerializeAsString().substr(0, 400)}) {
    const std::string path = temp_path("hostile.onnx");
    std::ofstream(path, std::ios::binary) << bytes;
    const auto r = run_cli("validate " + spec_for(path));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("hostile.onnx"), std::string::npos) << r.err;
  }
  expect_refused(changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_op_type("Softmax"); }),
                 "not an operator convbench translates; it reads Add, AveragePool", "graph.node[0] (Softmax");
  expect_refused(changed([](onnx::ModelProto& m) {
                   auto* pads = m.mutable_graph()->mutable_node(0)->mutable_attribute(1);
                   pads->set_ints(0, 0);
                 }),
                 "asymmetric pads", "graph.node[0] (Conv \"/conv1/Conv\")");
  expect_refused(
      changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(100); }),
      "holds 100 bytes, where its shape needs 124416", "graph.initializer[0] (conv1.weight)");
  expect_refused(changed([](onnx::ModelProto& m) {
                   auto* t = m.mutable_graph()->mutable_initializer(0);
                   t->clear_raw_data();
                   t->set_data_location(onnx::TensorProto::EXTERNAL);
                   auto* e = t->add_external_data();
                   e->set_key("location");
                   e->set_value("../../etc/passwd");
                 }),
                 "lies outside the model's folder", "graph.initializer[0]");
  expect_refused(
      changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t{1} << 41); }),
      "claims more than 2^40 elements", "graph.initializer[0]");
  // Nodes out of order (a cycle reads the same): the Relu reads b1 before the norm makes it.
  expect_refused(changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node()->SwapElements(1, 2); }),
                 "is not computed before this node", "graph.node[1] (Relu \"/Relu\")");
  expect_refused(changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(2)->clear_output(); }),
                 "has no output", "graph.node[2] (Relu \"/Relu\")");
  expect_refused(changed([](onnx::ModelProto& m) { m.mutable_opset_import(0)->set_version(23); }),
                 "opset 23 is outside the opsets convbench reads", "opset_import");
  expect_refused(changed([](onnx::ModelProto& m) {
                   value_info(m.mutable_graph()->add_input(), "z", {1, 3, 8, 8, 8});
                 }),
                 "a second data input", "graph.input[1]");
  expect_refused(changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_output(0)->set_name("nowhere"); }),
                 "is not computed from the input by any node", "graph.output[0]");
  // A weight computed from the input rather than stored: convbench's conv takes a parameter.
  expect_refused(changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(3)->set_input(1, "r1"); }),
                 "must be a constant", "graph.node[3] (Conv \"/conv2/Conv\")");
  // A norm's epsilon is the op's eps (torchvision's MobileNetV3 writes 0.001), and one no norm can
  // have is refused by the op's definition.
  const auto with_epsilon = [](float value) {
    return changed([value](onnx::ModelProto& m) {
      auto* eps = m.mutable_graph()->mutable_node(1)->add_attribute();
      eps->set_name("epsilon");
      eps->set_type(onnx::AttributeProto::FLOAT);
      eps->set_f(value);
    });
  };
  const OnnxBlock read = parse_onnx_block(with_epsilon(1e-3f).SerializeAsString(), temp_path("eps.onnx"));
  ASSERT_EQ(read.ops.at(1).op, "batch_norm");
  EXPECT_NEAR(read.ops.at(1).fields.get<double>("eps").value_or(0.0), 1e-3, 1e-9);
  EXPECT_FALSE(read.ops.at(1).fields.has("momentum"));
  const std::string negative = write_model(with_epsilon(-1.0f), "negative-eps.onnx");
  const auto refused = run_cli("validate " + spec_for(negative));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("eps must be a positive number"), std::string::npos) << refused.err;
  std::filesystem::remove(negative);
  // A norm cut short after its scale (found by fuzz_onnx_reader): refused at the node, never read past
  // the end of its inputs.
  expect_refused(changed([](onnx::ModelProto& m) {
                   auto* inputs = m.mutable_graph()->mutable_node(1)->mutable_input();
                   inputs->DeleteSubrange(2, inputs->size() - 2);
                 }),
                 "bias (input 2) is missing", "graph.node[1] (BatchNormalization");
  // Broadcasting by a constant is not convbench's add.
  expect_refused(changed([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(6)->set_input(1, "bn2.bias"); }),
                 "is a constant, where convbench's op takes values", "graph.node[6] (Add \"/Add\")");
}

// A folder of its own for each case of a model with external data (its links stay inside it).
std::filesystem::path fresh_folder(const std::string& name) {
  const std::filesystem::path dir = temp_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// MyBlock with skip.weight's values in the external data file `location` (the model's folder is
// `dir`); the right bytes are at `data_file`, wherever the location leads.
std::string external_block(const std::filesystem::path& dir, const std::string& location,
                           const std::filesystem::path& data_file) {
  onnx::ModelProto m = my_block();
  number_initializers(m);
  auto* c = m.mutable_graph()->mutable_initializer(2);  // skip.weight
  std::ofstream(data_file, std::ios::binary) << c->raw_data();
  c->clear_raw_data();
  c->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = c->add_external_data();
  e->set_key("location");
  e->set_value(location);
  const std::filesystem::path model = dir / "block.onnx";
  std::ofstream(model, std::ios::binary) << m.SerializeAsString();
  return model.string();
}

// External data reached through a symbolic link (a file linked to a secret, a folder linked
// elsewhere) is refused with exit 2, never read, unless the spec vouches for the model's links.
TEST(OnnxImport, ExternalDataIsNeverReadThroughALinkUnlessTheSpecAllowsIt) {
  const std::filesystem::path outside = fresh_folder("outside");
  // A link to a file outside the model's folder, as a model pointing at /etc/shadow would be.
  const std::filesystem::path linked = fresh_folder("linked-file");
  const std::string model = external_block(linked, "weights.bin", outside / "secret.bin");
  std::filesystem::create_symlink(outside / "secret.bin", linked / "weights.bin");
  auto r = run_cli("validate " + spec_for(model));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is reached through the symbolic link \"weights.bin\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(skip.weight)"), std::string::npos) << r.err;
  // Exporting the spec copies nothing of what the link points at: it is refused before a file is made.
  const std::filesystem::path models = temp_path("linked-export");
  std::filesystem::remove_all(models);
  r = run_cli("export " + spec_for(model) + " --onnx " + models.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(std::filesystem::exists(models));
  // A folder linked elsewhere, on the way to a real file.
  const std::filesystem::path via = fresh_folder("linked-folder");
  const std::string through = external_block(via, "data/w.bin", outside / "w.bin");
  std::filesystem::create_directory_symlink(outside, via / "data");
  r = run_cli("validate " + spec_for(through));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is reached through the symbolic link \"data\""), std::string::npos) << r.err;
  // A FIFO planted as the data file is refused at once, not waited on.
  const std::filesystem::path piped = fresh_folder("fifo-data");
  const std::string fifo_model = external_block(piped, "w.bin", outside / "unused.bin");
  ASSERT_EQ(::mkfifo((piped / "w.bin").c_str(), 0600), 0);
  r = run_cli("validate " + spec_for(fifo_model));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a regular file"), std::string::npos) << r.err;
  // The same files with the links vouched for (`allow_links: true`): read, the values the link's.
  for (const std::string& file : {model, through}) {
    std::string text = testing::read_file(spec_for(file));
    text.replace(text.find("file: "), 6, "allow_links: true, file: ");
    const std::string spec = temp_path("allow-links.yaml");
    std::ofstream(spec) << text;
    EXPECT_EQ(starting_values(spec).at("skip.weight"), initializer_values(
                                                           [] {
                                                             onnx::ModelProto m = my_block();
                                                             number_initializers(m);
                                                             return m;
                                                           }(),
                                                           "skip.weight"))
        << file;
  }
  // A model file given alone: --allow-links says it; a spec takes it per variant instead.
  r = run_cli("validate " + model + " --input 2x24x8x8x8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--allow-links"), std::string::npos) << r.err;
  r = run_cli("validate " + model + " --input 2x24x8x8x8 --allow-links");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("validate " + spec_for(model) + " --allow-links");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("in a spec, write allow_links: true"), std::string::npos) << r.err;
  for (const auto& dir : {outside, linked, via, piped}) std::filesystem::remove_all(dir);
}

// A small 2-D block around one node under test: x (2, C, 8, 8) -> Conv 3x3 (C -> C) -> NODE -> y.
onnx::ModelProto around_node(int64_t channels, const std::function<void(onnx::GraphProto&)>& node, int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto& g = *m.mutable_graph();
  value_info(g.add_input(), "x", {2, channels, 8, 8});
  value_info(g.add_output(), "y", {0});
  add_weight(g, "conv.weight", {channels, channels, 3, 3});
  ints(add_node(g, "Conv", "/conv/Conv", {"x", "conv.weight"}, {"c"}), "pads", {1, 1, 1, 1});
  node(g);
  return m;
}

// Each attribute that divides, multiplies or scales is checked at its node: a located refusal,
// never a crash (a division by zero, a range check) or a misleading message later.
TEST(OnnxImport, AttributesThatDivideOrMultiplyAreCheckedAtTheNode) {
  const auto refused = [](const onnx::ModelProto& m, const std::string& words, const std::string& where) {
    const std::string model = write_model(m, "attr.onnx");
    const auto r = run_cli("validate " + model);
    EXPECT_EQ(r.exit_code, 2) << words << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("attr.onnx: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(".onnx.json"), std::string::npos) << r.err;
  };
  // GroupNormalization (opset 18): more groups than channels, and groups that do not divide them.
  for (const auto& [groups, scale] : std::vector<std::pair<int64_t, int64_t>>{{64, 64}, {3, 3}, {3, 8}}) {
    refused(around_node(
                8,
                [&, groups = groups, scale = scale](onnx::GraphProto& g) {
                  add_weight(g, "gn.weight", {scale});
                  add_weight(g, "gn.bias", {scale});
                  integer(
                      add_node(g, "GroupNormalization", "/gn/GroupNormalization", {"c", "gn.weight", "gn.bias"}, {"y"}),
                      "num_groups", groups);
                },
                18),
            "num_groups " + std::to_string(groups) + " does not divide its input's 8 channels",
            "graph.node[1] (GroupNormalization");
  }
  refused(around_node(
              8,
              [](onnx::GraphProto& g) {
                add_weight(g, "gn.weight", {5});
                add_weight(g, "gn.bias", {5});
                integer(
                    add_node(g, "GroupNormalization", "/gn/GroupNormalization", {"c", "gn.weight", "gn.bias"}, {"y"}),
                    "num_groups", 4);
              },
              18),
          "neither one value per group", "graph.node[1] (GroupNormalization");
  // A bias of another length than the scale (found by fuzz_onnx_attributes: a range check).
  refused(around_node(
              8,
              [](onnx::GraphProto& g) {
                add_weight(g, "gn.weight", {4});
                add_weight(g, "gn.bias", {0});
                integer(
                    add_node(g, "GroupNormalization", "/gn/GroupNormalization", {"c", "gn.weight", "gn.bias"}, {"y"}),
                    "num_groups", 4);
              },
              18),
          "the bias (input 2) does not have the scale's shape", "graph.node[1] (GroupNormalization");
  // SpaceToDepth: channels x blocksize^2 past 2^31 (was "out_channels must be positive, got 0").
  refused(around_node(8,
                      [](onnx::GraphProto& g) {
                        integer(add_node(g, "SpaceToDepth", "/s2d", {"c"}, {"y"}), "blocksize", int64_t{1} << 20);
                      }),
          "blocksize 1048576 to the power 2 is more than the 2^31", "graph.node[1] (SpaceToDepth \"/s2d\")");
  refused(around_node(8,
                      [](onnx::GraphProto& g) {
                        integer(add_node(g, "SpaceToDepth", "/s2d", {"c"}, {"y"}), "blocksize", 40000);
                      }),
          "makes 8 x 1600000000 channels", "graph.node[1] (SpaceToDepth \"/s2d\")");
  refused(
      around_node(
          8, [](onnx::GraphProto& g) { integer(add_node(g, "DepthToSpace", "/d2s", {"c"}, {"y"}), "blocksize", 3); }),
      "its input's 8 channels are not a multiple of 9", "graph.node[1] (DepthToSpace \"/d2s\")");
  // Resize by an infinite or NaN scale: said as such.
  for (const auto& [scale, words] :
       std::vector<std::pair<float, std::string>>{{std::numeric_limits<float>::infinity(), "a scale of infinity"},
                                                  {std::numeric_limits<float>::quiet_NaN(), "a scale of NaN"},
                                                  {1e10f, "convbench takes scales from 1 to 2^31"}}) {
    refused(around_node(8,
                        [scale = scale](onnx::GraphProto& g) {
                          onnx::TensorProto* t = g.add_initializer();
                          t->set_name("scales");
                          t->set_data_type(onnx::TensorProto::FLOAT);
                          t->add_dims(4);
                          for (const float v : {1.0f, 1.0f, scale, scale}) t->add_float_data(v);
                          onnx::NodeProto* n = add_node(g, "Resize", "/up", {"c", "", "scales"}, {"y"});
                          for (const auto& [key, value] : {std::pair{"coordinate_transformation_mode", "asymmetric"},
                                                           std::pair{"nearest_mode", "floor"}}) {
                            onnx::AttributeProto* a = n->add_attribute();
                            a->set_name(key);
                            a->set_type(onnx::AttributeProto::STRING);
                            a->set_s(value);
                          }
                        }),
            words, "graph.node[1] (Resize \"/up\")");
  }
  // An input dim past 2^31 (its channels are what later ops multiply and spread over).
  onnx::ModelProto wide = around_node(8, [](onnx::GraphProto& g) { add_node(g, "Relu", "/relu", {"c"}, {"y"}); });
  wide.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(std::numeric_limits<int64_t>::max());
  refused(wide, "a dim of 9223372036854775807: convbench takes sizes from 1 to 2^31", "graph.input[0] (x)");
  // Two initializers of one name: which one a node reads would be a guess.
  refused(around_node(8,
                      [](onnx::GraphProto& g) {
                        add_weight(g, "conv.weight", {8, 8, 3, 3});
                        add_node(g, "Relu", "/relu", {"c"}, {"y"});
                      }),
          "a second initializer named \"conv.weight\"", "graph.initializer[1] (conv.weight)");
  // A refusal after the nodes are translated (a Concat of two sizes) names the model file and the
  // node, not the spec convbench made of the file.
  refused(around_node(8,
                      [](onnx::GraphProto& g) {
                        add_weight(g, "down.weight", {8, 8, 1, 1});
                        ints(add_node(g, "Conv", "/down/Conv", {"c", "down.weight"}, {"d"}), "strides", {2, 2});
                        integer(add_node(g, "Concat", "/cat", {"c", "d"}, {"y"}), "axis", 1);
                      }),
          "", "graph.node[2] (Concat \"/cat\")");
}

// A weight that many nodes share (tied, or a hostile file's one initializer under 20,000 convs)
// is read and held once: every op's starting values are the same object. What the reader holds is
// bounded (kMaxOnnxValueBytes) on the values actually held, not on the file's size or nodes.
TEST(OnnxImport, ASharedWeightIsHeldOnceAndWhatIsHeldIsBounded) {
  onnx::ModelProto m = around_node(64, [](onnx::GraphProto& g) {
    std::string previous = "c";
    for (int i = 0; i < 2000; ++i) {
      const std::string out = i + 1 == 2000 ? "y" : "c" + std::to_string(i);
      ints(add_node(g, "Conv", "/conv" + std::to_string(i), {previous, "conv.weight"}, {out}), "pads", {1, 1, 1, 1});
      previous = out;
    }
  });
  const OnnxBlock block = parse_onnx_block(m.SerializeAsString(), temp_path("shared.onnx"));
  ASSERT_EQ(block.ops.size(), 2001u);
  for (const ImportedOp& op : block.ops)
    EXPECT_EQ(op.values.at("weight").get(), block.ops[0].values.at("weight").get());
  OnnxContext cx;
  cx.file = "budget.onnx";
  // A count from a file may be any int64 (a channel count): refused before it is multiplied
  // (found by fuzz_onnx_attributes: 8 x (2^63 - 1) overflowed).
  EXPECT_THROW(hold_onnx_values(cx, std::numeric_limits<int64_t>::max(), "x"), InputError);
  EXPECT_THROW(hold_onnx_values(cx, -1, "x"), InputError);
  hold_onnx_values(cx, kMaxOnnxValueBytes / 8, "all of it");
  try {
    hold_onnx_values(cx, 1, "graph.node[7] (MatMul)");
    ADD_FAILURE() << "a value past the budget was held";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("graph.node[7] (MatMul)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2048 MiB"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, TheFilesInputMustAgreeWithTheBlock) {
  const std::string model = write_model(my_block(), "myblock.onnx");
  const auto r = run_cli("validate " + spec_for(model, 16));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the model's input channels is 24, the block's 16"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("blocks[0].variants[0].file"), std::string::npos) << r.err;
  // The output: the nodes give 48 channels; a block of 32 is refused at the file, not deep in a build.
  const std::string spec = spec_for(model);
  std::string text = testing::read_file(spec);
  text.replace(text.find("out_channels: 48"), 16, "out_channels: 32");
  std::ofstream(spec) << text;
  const auto o = run_cli("validate " + spec);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("the model's output has 48 channels, the block's out_channels 32"), std::string::npos) << o.err;
  std::filesystem::remove(model);
}

TEST(OnnxImport, EveryBlockingNodeIsNamedAtOnceAndDeadNodesAreNotRead) {
  // Two unknown operators, on two paths: both named in one refusal, with their indexes, names and
  // types; conv2, which reads the first one's output, is not (it is no blocker of its own). The
  // operators convbench reads are listed once, at the end.
  const onnx::ModelProto two = changed([](onnx::ModelProto& m) {
    m.mutable_graph()->mutable_node(2)->set_op_type("Softmax");
    m.mutable_graph()->mutable_node(5)->set_op_type("Softplus");
  });
  const std::string model = write_model(two, "two-blockers.onnx");
  const auto r = run_cli("validate " + spec_for(model));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.err.find("graph.node: 2 nodes block reading this file: graph.node[2] (Softmax \"/Relu\"): not an operator "
                 "convbench translates; graph.node[5] (Softplus \"/skip/Conv\"): not an operator convbench translates; "
                 "it reads Add, AveragePool"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("conv2"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("it reads", r.err.find("it reads") + 1), std::string::npos) << r.err;
  // A node nothing the output needs reads is an exporter's leftover, not the block: not even an
  // unknown operator there blocks the file.
  const onnx::ModelProto dead = changed([](onnx::ModelProto& m) {
    add_node(*m.mutable_graph(), "Softmax", "/unused", {"x"}, {"unused"});
    add_node(*m.mutable_graph(), "Relu", "/unused_too", {"unused"}, {"unused_too"});
  });
  const auto d = run_cli("validate " + spec_for(write_model(dead, "dead-nodes.onnx")));
  EXPECT_EQ(d.exit_code, 0) << d.err;
  // Past 24 blockers the rest are counted, not listed (a hostile file may have 100,000).
  const onnx::ModelProto many = changed([](onnx::ModelProto& m) {
    std::string last = "y";
    for (int i = 0; i < 30; ++i) {
      add_node(*m.mutable_graph(), "Softmax", "/s" + std::to_string(i), {"x"}, {"s" + std::to_string(i)});
      add_node(*m.mutable_graph(), "Add", "/a" + std::to_string(i), {last, "s" + std::to_string(i)},
               {"a" + std::to_string(i)});
      last = "a" + std::to_string(i);
    }
    m.mutable_graph()->mutable_output(0)->set_name(last);
  });
  const auto k = run_cli("validate " + spec_for(write_model(many, "many-blockers.onnx")));
  EXPECT_EQ(k.exit_code, 2);
  EXPECT_NE(k.err.find("30 nodes block reading this file"), std::string::npos) << k.err;
  EXPECT_NE(k.err.find("/s23"), std::string::npos) << k.err;
  EXPECT_EQ(k.err.find("/s24"), std::string::npos) << k.err;
  EXPECT_NE(k.err.find("; and 6 more"), std::string::npos) << k.err;
}

TEST(OnnxImport, AVariantThatCannotBeReadIsARowOfItsOwnAndTheOthersRun) {
  // The user's file has two unknown operators: analyze and compare still count and run the
  // block's other variants, and the file's variant is a row with status unreadable and every
  // blocking node in its message, without counts (not zeros).
  const onnx::ModelProto two = changed([](onnx::ModelProto& m) {
    m.mutable_graph()->mutable_node(2)->set_op_type("Softmax");
    m.mutable_graph()->mutable_node(5)->set_op_type("Softplus");
  });
  const std::string model = write_model(two, "unreadable-variant.onnx");
  auto spec_with = [&](const std::string& baseline) {
    const std::string path = temp_path("unreadable-variant.yaml");
    std::ofstream(path) << "blocks:\n  - name: blk\n    batch: 2\n    dims: 3\n    in_channels: 24\n"
                        << "    out_channels: 48\n    size: 8\n"
                        << baseline << "    variants:\n"
                        << "      - standard\n      - {kind: onnx, name: mine, file: " << model << "}\n"
                        << "      - separable\n";
    return path;
  };
  const std::string spec = spec_with("");
  const std::string blockers = "2 nodes block reading this file: graph.node[2] (Softmax";
  const std::string json = temp_path("unreadable-variant.json");
  const auto a = run_cli("analyze " + spec + " --json " + json);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("mine (unreadable)"), std::string::npos) << a.out;
  EXPECT_NE(a.err.find("blk / mine: unreadable: "), std::string::npos) << a.err;
  EXPECT_NE(a.err.find(blockers), std::string::npos) << a.err;
  const auto rows = nlohmann::json::parse(testing::read_file(json))["results"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["variant"], "standard");
  EXPECT_EQ(rows[1]["variant"], "separable");
  EXPECT_GT(rows[1]["params"].get<int64_t>(), 0);
  EXPECT_FALSE(rows[0].contains("status"));  // an analysis row that was read has none
  EXPECT_EQ(rows[2]["variant"], "mine");
  EXPECT_EQ(rows[2]["status"], "unreadable");
  EXPECT_NE(rows[2]["message"].get<std::string>().find(blockers), std::string::npos) << rows[2];
  EXPECT_EQ(rows[2]["message"].get<std::string>().rfind(model + ": graph.node: ", 0), 0u) << rows[2];
  EXPECT_FALSE(rows[2].contains("params"));
  EXPECT_FALSE(rows[2].contains("macs"));
  EXPECT_FALSE(rows[2].contains("memory"));
  // Read back, the row keeps its status; the CSV leaves its counts empty.
  const auto csv = run_cli("report " + json + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("blk,mine,onnx,,false,3,float32,channels_first,train,2x24x8x8x8,,,,"), std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(",unreadable,"), std::string::npos) << csv.out;
  // compare measures the two it can read; the third says why it did not run.
  const auto c = run_cli("compare " + spec + " --memory-only --device reference --json -");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto measured = nlohmann::json::parse(c.out)["results"];
  ASSERT_EQ(measured.size(), 3u);
  EXPECT_EQ(measured[0]["status"], "ok");
  EXPECT_EQ(measured[1]["status"], "ok");
  EXPECT_EQ(measured[2]["status"], "unreadable");
  const auto t = run_cli("compare " + spec + " --memory-only --device reference");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("unreadable: "), std::string::npos) << t.out;
  // --filter picks the unreadable variant like any other (the baseline stays).
  const auto f = run_cli("analyze " + spec + " --filter mine --json -");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out)["results"].size(), 2u) << f.out;
  // A check of the spec, a plan or an explanation needs every variant: refused, as before.
  EXPECT_EQ(run_cli("validate " + spec).exit_code, 2);
  EXPECT_EQ(run_cli("compare " + spec + " --explain --memory-only --device reference").exit_code, 2);
  // The baseline cannot be missing: every ratio is to it.
  const auto b = run_cli("analyze " + spec_with("    baseline: mine\n"));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("this variant is the block's baseline"), std::string::npos) << b.err;
  std::filesystem::remove(model);
}

// What PyTorch's default exporter writes in a node's metadata_props (ONNX 1.16's field 9, which
// Debian's libonnx 1.12 keeps as an unknown field): here, that it folded a batch norm into a conv.
void mark_folded(onnx::NodeProto& node) {
  onnx::StringStringEntryProto entry;
  entry.set_key("pkg.onnxscript.rewriter.rule_name");
  entry.set_value("RemoveOptionalBiasFromConv, FuseBatchNormIntoConv");
  node.mutable_unknown_fields()->AddLengthDelimited(9, entry.SerializeAsString());
}

TEST(OnnxImport, AFileWhoseExporterFoldedItsBatchNormsIsForInference) {
  // MyBlock without its norms, as torch.onnx.export(m, (x,), f) writes it even for a module in
  // training: each conv took its norm in.
  onnx::ModelProto m = my_block();
  onnx::GraphProto& g = *m.mutable_graph();
  onnx::GraphProto folded = g;
  folded.clear_node();
  for (const auto& node : g.node()) {
    if (node.op_type() == "BatchNormalization") continue;
    onnx::NodeProto* n = folded.add_node();
    *n = node;
    for (auto& in : *n->mutable_input())
      if (in == "b1" || in == "b2") in = in == "b1" ? "c1" : "c2";
    if (node.name() == "/conv1/Conv" || node.name() == "/conv2/Conv") mark_folded(*n);
  }
  *m.mutable_graph() = folded;
  const std::string model = write_model(m, "folded.onnx");
  const auto train = run_cli("validate " + spec_for(model));
  EXPECT_EQ(train.exit_code, 2);
  EXPECT_NE(train.err.find("blocks[0].variants[0].file: the exporter folded 2 batch norm(s) into the conv before each "
                           "(graph.node[0] (Conv \"/conv1/Conv\"), graph.node[2] (Conv \"/conv2/Conv\")"),
            std::string::npos)
      << train.err;
  EXPECT_NE(
      train.err.find("measure it with mode: infer, or export a trainable file with torch.onnx.export(model, (x,), "
                     "f, dynamo=False, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)"),
      std::string::npos)
      << train.err;
  // The same file in inference, and as a model file (which is then measured in inference).
  const std::string spec = temp_path("folded.yaml");
  std::ofstream(spec) << "blocks:\n  - {name: mine, batch: 2, dims: 3, in_channels: 24, out_channels: 48, size: 8, "
                      << "mode: infer, variants: [{kind: onnx, name: folded, file: " << model << "}]}\n";
  const auto infer = run_cli("validate " + spec);
  EXPECT_EQ(infer.exit_code, 0) << infer.err;
  const auto file = run_cli("analyze " + model + " --input 2x24x8x8x8");
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_NE(file.out.find("2x24x8x8x8, float32, channels_first, infer"), std::string::npos) << file.out;
  // The same nodes without the exporter's mark are a block that trains.
  onnx::ModelProto unmarked = m;
  for (auto& node : *unmarked.mutable_graph()->mutable_node()) node.mutable_unknown_fields()->Clear();
  const auto plain = run_cli("validate " + spec_for(write_model(unmarked, "plain.onnx")));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  // The TorchScript exporter's eval-mode file: its constant folding computed the conv's weight
  // (named "onnx::Conv_<n>", where a parameter keeps its module's name), the norm folded in.
  onnx::ModelProto eval = unmarked;
  eval.set_producer_name("pytorch");
  eval.mutable_graph()->mutable_initializer(0)->set_name("onnx::Conv_21");
  eval.mutable_graph()->mutable_node(0)->set_input(1, "onnx::Conv_21");
  const auto folded_eval = run_cli("validate " + spec_for(write_model(eval, "eval-export.onnx")));
  EXPECT_EQ(folded_eval.exit_code, 2);
  EXPECT_NE(folded_eval.err.find("the exporter folded 1 batch norm(s) into the conv before each (graph.node[0] (Conv "
                                 "\"/conv1/Conv\")"),
            std::string::npos)
      << folded_eval.err;
}

// A small graph on an 8-channel 2-D input (x: 2x8x4x4), for the patterns' refusals.
onnx::ModelProto small_model(const std::function<void(onnx::GraphProto&)>& nodes) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto& g = *m.mutable_graph();
  value_info(g.add_input(), "x", {2, 8, 4, 4});
  value_info(g.add_output(), "y", {2, 8, 4, 4});
  nodes(g);
  return m;
}

std::string validate_model(const onnx::ModelProto& m, const std::string& name) {
  const auto r = run_cli("validate " + write_model(m, name) + " --input 2x8x4x4");
  EXPECT_EQ(r.exit_code, 2) << name;
  return r.err;
}

TEST(OnnxImport, ThePatternsExportersWriteAreReadOnlyWhole) {
  // A channels-last view must come back before the output, and only ConvNeXt's permutation is one.
  std::string err = validate_model(small_model([](onnx::GraphProto& g) {
                                     ints(add_node(g, "Transpose", "/to_last", {"x"}, {"t"}), "perm", {0, 2, 3, 1});
                                     add_node(g, "Relu", "/relu", {"t"}, {"y"});
                                   }),
                                   "left-channels-last.onnx");
  EXPECT_NE(err.find("graph.output[0]: \"y\" is a channels-last view"), std::string::npos) << err;
  err = validate_model(small_model([](onnx::GraphProto& g) {
                         ints(add_node(g, "Transpose", "/swap", {"x"}, {"y"}), "perm", {0, 1, 3, 2});
                       }),
                       "odd-transpose.onnx");
  EXPECT_NE(err.find("graph.node[0] (Transpose \"/swap\"): a Transpose convbench reads only to channels-last"),
            std::string::npos)
      << err;
  // On the view, only pointwise ops, LayerNormalization, MatMul and its bias, and a per-channel Mul.
  err = validate_model(small_model([](onnx::GraphProto& g) {
                         ints(add_node(g, "Transpose", "/to_last", {"x"}, {"t"}), "perm", {0, 2, 3, 1});
                         add_node(g, "GlobalAveragePool", "/pool", {"t"}, {"p"});
                         ints(add_node(g, "Transpose", "/back", {"p"}, {"y"}), "perm", {0, 3, 1, 2});
                       }),
                       "pool-of-view.onnx");
  EXPECT_NE(err.find("graph.node[1] (GlobalAveragePool \"/pool\"): a GlobalAveragePool of a channels-last view"),
            std::string::npos)
      << err;
  // A noise drops samples, channels or elements of the value it multiplies.
  err = validate_model(small_model([](onnx::GraphProto& g) {
                         add_weight(g, "like", {2, 3, 1, 1});
                         add_weight(g, "keep", {});
                         const float rate = 0.9f;
                         g.mutable_initializer(1)->set_raw_data(std::string(reinterpret_cast<const char*>(&rate), 4));
                         add_node(g, "RandomUniformLike", "/noise", {"like"}, {"u"});
                         add_node(g, "Less", "/less", {"u", "keep"}, {"m"});
                         integer(add_node(g, "Cast", "/cast", {"m"}, {"c"}), "to", onnx::TensorProto::FLOAT);
                         add_node(g, "Div", "/div", {"c", "keep"}, {"s"});
                         add_node(g, "Mul", "/mul", {"x", "s"}, {"y"});
                       }),
                       "channel-noise.onnx");
  EXPECT_NE(err.find("graph.node[4] (Mul \"/mul\"): a noise of 2x3x1x1 for a value of 8 channels: convbench reads "
                     "one value per sample (drop_path), per channel (channel_dropout) or per element (dropout)"),
            std::string::npos)
      << err;
  // A Gather is read of a Shape's dims only.
  err = validate_model(small_model([](onnx::GraphProto& g) {
                         add_weight(g, "index", {});
                         g.mutable_initializer(0)->set_data_type(onnx::TensorProto::INT64);
                         g.mutable_initializer(0)->set_raw_data(std::string(8, '\0'));
                         add_node(g, "Gather", "/gather", {"x", "index"}, {"y"});
                       }),
                       "gather-of-value.onnx");
  EXPECT_NE(err.find("graph.node[0] (Gather \"/gather\"): convbench reads Gather only of a Shape's dims"),
            std::string::npos)
      << err;
  // A ReduceMean over channels is no pool.
  err = validate_model(
      small_model([](onnx::GraphProto& g) { ints(add_node(g, "ReduceMean", "/mean", {"x"}, {"y"}), "axes", {1}); }),
      "mean-of-channels.onnx");
  EXPECT_NE(err.find("a mean over axes (1): convbench reads a mean over every spatial dim"), std::string::npos) << err;
}

// An int64 initializer with these values, in these dims.
void add_integers(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims,
                  const std::vector<int64_t>& values) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (const int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
}

// What the default exporter writes for torchvision ConvNeXt's head: the pooled value, reshaped to
// -1 and gathered back by indices 0..N*C-1 in its own N x C x 1 x 1 shape (as_strided).
onnx::ModelProto strided_view_model(int64_t batch, const std::vector<int64_t>& order) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(18);
  onnx::GraphProto& g = *m.mutable_graph();
  value_info(g.add_input(), "x", {batch, 8, 4, 4});
  value_info(g.add_output(), "y", {batch, 8, 1, 1});
  add_integers(g, "flat", {1}, {-1});
  add_integers(g, "order", {2, 8, 1, 1}, order);
  add_node(g, "GlobalAveragePool", "/pool", {"x"}, {"p"});
  add_node(g, "Reshape", "/flatten", {"p", "flat"}, {"f"});
  add_node(g, "Gather", "/as_strided", {"f", "order"}, {"v"});
  add_node(g, "Relu", "/relu", {"v"}, {"y"});
  return m;
}

TEST(OnnxImport, AnAsStridedViewOfAPooledValueIsTheValue) {
  std::vector<int64_t> order(16);
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  const auto r = run_cli("analyze " + write_model(strided_view_model(2, order), "strided-view.onnx") +
                         " --input 2x8x4x4 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["results"][0]["structure"], "global_avg_pool, relu");
  // Other indices pick or reorder elements: no view of the value.
  std::swap(order[0], order[1]);
  const auto swapped =
      run_cli("validate " + write_model(strided_view_model(2, order), "strided-swap.onnx") + " --input 2x8x4x4");
  EXPECT_EQ(swapped.exit_code, 2);
  EXPECT_NE(swapped.err.find("graph.node[2] (Gather \"/as_strided\"): a Gather of a flattened value that is not "
                             "the value itself"),
            std::string::npos)
      << swapped.err;
  // Indices of 2 samples cover a batch of 2 only: a file whose batch is symbolic is refused.
  std::swap(order[0], order[1]);
  const auto symbolic =
      run_cli("validate " + write_model(strided_view_model(0, order), "strided-batch.onnx") + " --input 2x8x4x4");
  EXPECT_EQ(symbolic.exit_code, 2);
  EXPECT_NE(symbolic.err.find("in a file whose input batch is symbolic"), std::string::npos) << symbolic.err;
}

}  // namespace
}  // namespace convbench

#endif  // CONVBENCH_WITH_ONNX

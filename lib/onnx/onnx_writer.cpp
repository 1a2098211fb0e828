#include "onnx/onnx_writer.hpp"

#include <cstring>

#include "onnx/onnx_export.hpp"
#include "ops/op_registry.hpp"

namespace convbench {
namespace {

template <class T>
std::string raw_bytes(const std::vector<T>& v) {
  std::string raw(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(raw.data(), v.data(), raw.size());  // ONNX raw data is little-endian, as x86 and arm64
  return raw;
}

onnx::TensorProto& add_tensor(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims,
                              int32_t type) {
  onnx::TensorProto& t = *g.add_initializer();
  t.set_name(name);
  t.set_data_type(type);
  for (const int64_t d : dims) t.add_dims(d);
  return t;
}

}  // namespace

OnnxWriter::OnnxWriter(const Graph& g, const GraphValues& v, onnx::GraphProto& o, int32_t type)
    : OnnxNodeWriter(g, v), out(o), elem_type(type) {
  for (const Param& p : g.params) taken_.insert(p.name);
  for (const Param& b : g.buffers) taken_.insert(b.name);
  for (const Value& value : g.values) tensors_.push_back(fresh(value.name.empty() ? "value" : value.name));
}

std::string OnnxWriter::fresh(const std::string& base) {
  std::string name = base;
  for (int k = 2; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
  taken_.insert(name);
  return name;
}

OnnxNode OnnxWriter::node(const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  onnx::NodeProto& n = *out.add_node();
  n.set_op_type(type);
  n.set_name(name);
  for (const std::string& s : inputs) n.add_input(s);
  for (const std::string& s : outputs) n.add_output(s);
  return OnnxNode(*this, out.node_size() - 1);
}

onnx::AttributeProto& OnnxWriter::attribute(int node, const std::string& name,
                                            onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto& a = *out.mutable_node(node)->add_attribute();
  a.set_name(name);
  a.set_type(type);
  return a;
}

void OnnxWriter::set_ints(int node, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto& a = attribute(node, name, onnx::AttributeProto::INTS);
  for (const int64_t x : v) a.add_ints(x);
}

void OnnxWriter::set_integer(int node, const std::string& name, int64_t v) {
  attribute(node, name, onnx::AttributeProto::INT).set_i(v);
}

void OnnxWriter::set_number(int node, const std::string& name, double v) {
  attribute(node, name, onnx::AttributeProto::FLOAT).set_f(static_cast<float>(v));
}

void OnnxWriter::set_text(int node, const std::string& name, const std::string& v) {
  attribute(node, name, onnx::AttributeProto::STRING).set_s(v);
}

std::string OnnxWriter::weights(const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<double>& v) {
  taken_.insert(name);
  onnx::TensorProto& t = add_tensor(out, name, dims, elem_type);
  if (elem_type == onnx::TensorProto::DOUBLE) {
    t.set_raw_data(raw_bytes(v));
  } else {  // FLOAT: onnx_export.cpp admits no other type
    std::vector<float> f(v.begin(), v.end());
    t.set_raw_data(raw_bytes(f));
  }
  return name;
}

std::string OnnxWriter::int64s(const std::string& base, const std::vector<int64_t>& v) {
  const std::string name = fresh(base);
  add_tensor(out, name, {static_cast<int64_t>(v.size())}, onnx::TensorProto::INT64).set_raw_data(raw_bytes(v));
  return name;
}

std::string OnnxWriter::floats(const std::string& base, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  const std::string name = fresh(base);
  add_tensor(out, name, dims, onnx::TensorProto::FLOAT).set_raw_data(raw_bytes(v));
  return name;
}

void write_onnx_op(OnnxWriter& w, const Op& op) {
  const OpDefinition& d = op_definition(op.kind);
  if (d.onnx_export) {
    d.onnx_export(w, op);
    return;
  }
  if (!d.onnx_refusal.empty()) throw OnnxExportError(op.name, std::string(d.onnx_refusal));
  throw OnnxExportError(op.name, "op kind " + std::string(to_string(op.kind)) + " has no ONNX form");
}

}  // namespace convbench

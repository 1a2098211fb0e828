#include "onnx/onnx_export.hpp"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx/onnx_writer.hpp"

namespace convbench {
namespace {

// float32 (and tf32, which is float32 storage) and float64. float16 and bfloat16 are refused:
// writing them needs convbench's rounding of every initializer, not done yet.
int32_t elem_type_of(DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::tf32: return onnx::TensorProto::FLOAT;
    case DType::float64: return onnx::TensorProto::DOUBLE;
    default:
      throw OnnxExportError("", "dtype " + std::string(to_string(dtype)) +
                                    ": convbench writes float32 and float64 graphs to ONNX (give the block "
                                    "dtype: float32 to export it)");
  }
}

void value_info(onnx::ValueInfoProto& v, const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
  v.set_name(name);
  auto& t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(type);
  for (const int64_t d : dims) t.mutable_shape()->add_dim()->set_dim_value(d);
}

// The checker (structure, operators of opset 17, initializer types) and strict shape inference,
// which fails when a node's inferred output disagrees with the declared graph output: the shape
// convbench computes for the block.
void check(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1));
  } catch (const std::exception& e) {
    throw OnnxExportError("", std::string("the ONNX checker refuses the model: ") + e.what());
  }
}

}  // namespace

onnx::ModelProto export_onnx_model(const Graph& graph, const GraphValues& values, const OnnxExportInfo& info) {
  const int32_t type = elem_type_of(graph.desc(graph.input).dtype);
  onnx::ModelProto model;
  model.set_ir_version(kOnnxExportIrVersion);
  model.set_producer_name("convbench");
  model.set_producer_version(info.producer_version);
  model.set_doc_string(info.doc);
  model.add_opset_import()->set_version(kOnnxExportOpset);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(info.model_name);
  OnnxWriter w(graph, values, g, type);
  value_info(*g.add_input(), w.tensor(graph.input), type, graph.desc(graph.input).shape);
  for (const Op& op : graph.ops) write_onnx_op(w, op);
  std::vector<int64_t> output = graph.desc(graph.output).shape;
  // A linear op's output is written as (N, out) when it ends the graph (ops/linear.cpp).
  for (const Op& op : graph.ops)
    if (op.kind == OpKind::linear && op.output == graph.output) output.resize(2);
  value_info(*g.add_output(), w.tensor(graph.output), type, output);
  if (graph.output == graph.input) throw OnnxExportError("", "the graph computes nothing from its input");
  check(model);
  return model;
}

}  // namespace convbench

// The shape arithmetic exporters write around a value's Shape: torchvision's stochastic depth with
// a symbolic batch (TorchScript exporter, dynamic_axes) draws its noise of shape N x 1 x ... as
// Shape, Gather of dim 0, Unsqueeze, Concat with constant ones, ConstantOfShape. Followed here as
// vectors of dims, each a number, the block's batch, or unknown (a spatial size: convbench's
// importer follows channels through the nodes, not sizes), and read by the node that needs the
// shape. Nothing here becomes an op: shapes cost nothing at run time.
#include <algorithm>
#include <cstdint>

#include "onnx/onnx_node_reading.hpp"
#include "util/markup_escape.hpp"

namespace convbench::onnx_reading {
namespace {

using Dim = OnnxContext::ShapeDim;
using ShapeValue = OnnxContext::ShapeValue;

const ShapeValue* shape_input(const At& at, int k) {
  if (!has_input(at.node, k)) return nullptr;
  const auto it = at.cx.shapes.find(at.node.input(k));
  return it == at.cx.shapes.end() ? nullptr : &it->second;
}

// A constant's integers as dims (a Concat's constant part, ConstantOfShape's constant shape).
std::vector<Dim> constant_dims(const At& at, int k) {
  std::vector<Dim> dims;
  for (const int64_t v : integers(at, constant_input(at, k, "the shape"), "the shape"))
    dims.push_back({Dim::Kind::number, v});
  return dims;
}

// Elementwise integer arithmetic on dims (ONNX's Div of integers truncates; the dims here are
// sizes, never negative): a number where both are numbers, unknown otherwise.
// A hostile file's constants may be any int64: a result past it is refused, never wrapped.
Dim combine(const std::string& type, const Dim& a, const Dim& b, const At& at) {
  if (a.kind != Dim::Kind::number || b.kind != Dim::Kind::number) return Dim{};
  int64_t v = 0;
  bool overflow = false;
  if (type == "Add") {
    overflow = __builtin_add_overflow(a.value, b.value, &v);
  } else if (type == "Sub") {
    overflow = __builtin_sub_overflow(a.value, b.value, &v);
  } else if (type == "Mul") {
    overflow = __builtin_mul_overflow(a.value, b.value, &v);
  } else {
    if (b.value == 0) at.refuse("a shape divided by 0");
    overflow = a.value == INT64_MIN && b.value == -1;
    if (!overflow) v = a.value / b.value;
  }
  if (overflow) at.refuse("shape arithmetic past 64-bit integers");
  return {Dim::Kind::number, v};
}

// Input k as dims: a shape value, or a constant's integers (a 0-d constant: one dim, scalar).
std::optional<ShapeValue> dims_input(const At& at, int k) {
  if (const ShapeValue* v = shape_input(at, k)) return *v;
  if (!is_constant_input(at, k)) return std::nullopt;
  const OnnxTensor& t = constant_input(at, k, "the shape");
  if (!t.values) return std::nullopt;
  ShapeValue v{constant_dims(at, k), t.dims.empty()};
  return v;
}

}  // namespace

std::vector<Dim> shape_dims_input(const At& at, int k, const std::string& what) {
  if (const ShapeValue* v = shape_input(at, k)) return v->dims;
  if (!has_input(at.node, k)) at.refuse(what + " (input " + std::to_string(k) + ") is missing");
  return constant_dims(at, k);
}

std::vector<int64_t> known_integers(const At& at, int k, const std::string& what) {
  if (const ShapeValue* v = shape_input(at, k)) {
    std::vector<int64_t> out;
    for (const Dim& d : v->dims) {
      if (d.kind != Dim::Kind::number)
        at.refuse(what + " depends on a size convbench does not follow (the batch or a spatial size)");
      out.push_back(d.value);
    }
    return out;
  }
  return integers(at, constant_input(at, k, what), what);
}

std::optional<std::vector<Dim>> shape_only_input(const At& at, int k) {
  if (!has_input(at.node, k)) return std::nullopt;
  if (const auto it = at.cx.filled.find(at.node.input(k)); it != at.cx.filled.end()) return it->second;
  if (!is_constant_input(at, k)) return std::nullopt;
  std::vector<Dim> dims;
  for (const int64_t d : constant_input(at, k, "the tensor").dims) dims.push_back({Dim::Kind::number, d});
  return dims;
}

bool translate_shape_arithmetic(OnnxContext& cx, const At& at, const std::string& type) {
  const Node& n = at.node;
  if (type == "Gather") {
    const ShapeValue* from = shape_input(at, 0);
    if (!from) at.refuse("convbench reads Gather only of a Shape's dims (shape arithmetic), not of values");
    if (int_attribute(n, "axis", 0) != 0) at.refuse("a Gather of a shape along an axis other than 0");
    const OnnxTensor& indices = constant_input(at, 1, "the indices");
    const auto size = static_cast<int64_t>(from->dims.size());
    ShapeValue out{{}, indices.dims.empty()};
    for (int64_t i : integers(at, indices, "the indices")) {
      if (i < -size || i >= size) at.refuse("index " + std::to_string(i) + " of a shape of " + std::to_string(size));
      out.dims.push_back(from->dims[static_cast<size_t>(i < 0 ? i + size : i)]);
    }
    if (out.scalar && out.dims.size() != 1) at.refuse("a scalar index that is not one number");
    cx.shapes[n.output(0)] = std::move(out);
    return true;
  }
  if (type == "Cast") {  // a shape cast between integer types (the TorchScript exporter's): the same dims
    const ShapeValue* from = shape_input(at, 0);
    if (!from) return false;
    cx.shapes[n.output(0)] = *from;
    return true;
  }
  if (type == "Unsqueeze") {
    const ShapeValue* from = shape_input(at, 0);
    if (!from) return false;
    if (!from->scalar) at.refuse("an Unsqueeze of a shape vector: convbench reads one of a single dim");
    cx.shapes[n.output(0)] = {from->dims, false};
    return true;
  }
  if (type == "Add" || type == "Sub" || type == "Mul" || type == "Div") {
    if (n.input_size() != 2 || (!shape_input(at, 0) && !shape_input(at, 1))) return false;
    const auto a = dims_input(at, 0), b = dims_input(at, 1);
    if (!a || !b) at.refuse("shape arithmetic with a value that is not a shape or an integer constant");
    const size_t size = std::max(a->dims.size(), b->dims.size());
    if ((a->dims.size() != size && a->dims.size() != 1) || (b->dims.size() != size && b->dims.size() != 1))
      at.refuse("shape arithmetic on vectors of different lengths");
    ShapeValue out{{}, a->scalar && b->scalar};
    for (size_t i = 0; i < size; ++i)
      out.dims.push_back(combine(type, a->dims[a->dims.size() == 1 ? 0 : i], b->dims[b->dims.size() == 1 ? 0 : i], at));
    cx.shapes[n.output(0)] = std::move(out);
    return true;
  }
  if (type == "Concat") {
    // Shapes, or integer constants alone along axis 0 (a shape written out by the TorchScript
    // exporter: Unsqueezed constants concatenated, ShuffleNet's view to N x 2 x C/2 x H x W).
    bool any_shape = false, all_integer_constants = n.input_size() > 0;
    for (int k = 0; k < n.input_size(); ++k) {
      any_shape = any_shape || shape_input(at, k);
      const bool integer_constant =
          is_constant_input(at, k) && (cx.constants.at(n.input(k)).data_type == onnx::TensorProto::INT64 ||
                                       cx.constants.at(n.input(k)).data_type == onnx::TensorProto::INT32);
      all_integer_constants = all_integer_constants && integer_constant;
    }
    if (!any_shape && !all_integer_constants) return false;
    if (int_attribute(n, "axis", 0) != 0) at.refuse("a Concat of shapes along an axis other than 0");
    ShapeValue out;
    for (int k = 0; k < n.input_size(); ++k) {
      if (const ShapeValue* part = shape_input(at, k)) {
        if (part->scalar) at.refuse("a Concat of a 0-d shape value");
        out.dims.insert(out.dims.end(), part->dims.begin(), part->dims.end());
      } else {
        const auto dims = constant_dims(at, k);
        out.dims.insert(out.dims.end(), dims.begin(), dims.end());
      }
    }
    cx.shapes[n.output(0)] = std::move(out);
    return true;
  }
  if (type == "ConstantOfShape") {
    const ShapeValue* shape = shape_input(at, 0);
    if (shape && shape->scalar) at.refuse("a ConstantOfShape of a 0-d shape");
    cx.filled[n.output(0)] = shape ? shape->dims : constant_dims(at, 0);
    return true;
  }
  return false;
}

}  // namespace convbench::onnx_reading

// upsample, as torch.nn.functional.interpolate: mode nearest (the default: output position o
// reads input o / scale, an integer scale), or mode linear (PyTorch's bilinear in 2-D, trilinear
// in 3-D) to `scale` times the input or to a given `size`, with or without align_corners.
// Nothing saved. FLOPs: nearest 0 forward, backward sums scale^d gradients into each input element
// (scale^d - 1 adds); linear forward 2^(d+1) - 1 per output element (2^d corner products, their
// 2^d - 1 sums), backward 2^(d+1) per output element (a product and an add scattered per corner).
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

namespace {

// scale and size exclude each other; align_corners and size need mode linear (PyTorch refuses
// align_corners with nearest; convbench's nearest kernels take an integer scale).
void apply_upsample_fields(const OpFieldValues& f, const FieldContext&, Op& op) {
  op.upsample_linear = f.is_keyword("mode", "linear");
  const auto scale = f.get<int64_t>("scale");
  const auto size = f.get<std::vector<int64_t>>("size");
  require_at(!(scale && size), op.name, {"size"}, "give either scale or size, not both");
  require_at(op.upsample_linear || !f.has("align_corners"), op.name, {"align_corners"},
             "align_corners needs mode linear (nearest upsampling has no corners to align)");
  require_at(op.upsample_linear || !size, op.name, {"size"},
             "size needs mode linear (nearest upsampling takes an integer scale)");
  op.upsample_scale = scale.value_or(2);
  op.align_corners = f.get<bool>("align_corners").value_or(false);
  op.upsample_size = size.value_or(std::vector<int64_t>{});
}

}  // namespace

namespace {

// Resize as PyTorch's interpolate: nearest is floor(dst / scale) (asymmetric, floor); linear is
// half_pixel (PyTorch's variant of it) or align_corners.
void upsample_onnx(OnnxNodeWriter& w, const Op& op) {
  using namespace onnx_export;
  const TensorDesc& x = in_desc(w, op);
  std::vector<std::string> inputs = {in(w, op), ""};
  if (op.upsample_size.empty()) {
    std::vector<float> scales(static_cast<size_t>(x.rank()), static_cast<float>(op.upsample_scale));
    scales[0] = scales[1] = 1;
    inputs.push_back(w.floats(op.name + ".scales", {x.rank()}, scales));
  } else {
    inputs.push_back("");
    inputs.push_back(w.int64s(op.name + ".sizes", out_desc(w, op).shape));
  }
  OnnxNode n = w.node("Resize", op.name, inputs, {out(w, op)});
  if (op.upsample_linear) {
    n.text("mode", "linear");
    n.text("coordinate_transformation_mode", op.align_corners ? "align_corners" : "pytorch_half_pixel");
  } else {
    n.text("mode", "nearest");
    n.text("coordinate_transformation_mode", "asymmetric");
    n.text("nearest_mode", "floor");
  }
}

}  // namespace

OpDefinition define_upsample() {
  OpDefinition d;
  d.kind = OpKind::upsample;
  d.fields = {{"scale", FieldKind::positive_int},
              {"mode", FieldKind::keyword, {"nearest", "linear"}},
              {"align_corners", FieldKind::boolean},
              {"size", FieldKind::per_dim_positive}};
  d.apply_fields = apply_upsample_fields;
  d.work = [](const WorkQuery& q) {
    OpWork w;
    if (q.op.upsample_linear) {
      const int64_t corners = int64_t{1} << q.graph.desc(q.op.output).spatial_rank();
      w.elementwise.forward = checked_mul(q.output_elements(), 2 * corners - 1);
      if (q.any_input_grad()) w.elementwise.backward_data = checked_mul(q.output_elements(), 2 * corners);
      return w;
    }
    if (q.any_input_grad())
      w.elementwise.backward_data = q.output_elements() - count_elements(q.graph.desc(q.op.inputs.at(0)));
    return w;
  };
  // Nearest keeps its attributes (and so its graph hash) as before linear existed.
  d.attributes = [](const Op& op) {
    if (!op.upsample_linear) return nlohmann::ordered_json{{"scale", op.upsample_scale}};
    nlohmann::ordered_json j = {{"mode", "linear"}, {"align_corners", op.align_corners}};
    if (op.upsample_size.empty())
      j["scale"] = op.upsample_scale;
    else
      j["size"] = op.upsample_size;
    return j;
  };
  d.infer = [](const Graph& graph, Op& op) {
    OpShape s{graph.desc(op.inputs.at(0)), {}, {}};
    const int dims = s.output.spatial_rank();
    require(op.upsample_linear || !op.align_corners, op.name, "align_corners needs mode linear");
    if (!op.upsample_size.empty()) {
      require(op.upsample_linear, op.name, "size needs mode linear");
      check_window(op.name, op.upsample_size, dims, "size", 1);
      for (int i = 0; i < dims; ++i) {
        const int64_t size = op.upsample_size[static_cast<size_t>(i)];
        require_at(size <= kMaxDimSize, op.name, {"size"}, "size " + std::to_string(size) + " is larger than 2^31");
        s.output.shape[static_cast<size_t>(i + 2)] = size;
      }
      return s;
    }
    require(op.upsample_scale >= 1, op.name, "scale must be >= 1");
    for (int i = 2; i < s.output.rank(); ++i) {
      int64_t& size = s.output.shape[static_cast<size_t>(i)];
      const bool overflow = __builtin_mul_overflow(size, op.upsample_scale, &size);
      require_at(!overflow && size <= kMaxDimSize, op.name, {"scale"},
                 "the upsampled size " + (overflow ? std::string("beyond int64") : std::to_string(size)) +
                     " is larger than 2^31");
    }
    return s;
  };
  // autocast: CUDA autocast registers the upsample kernels on its fp32 list; CPU autocast has no
  // rule for them (a bfloat16 input stays bfloat16, checked in the peer environment).
  d.autocast = [](const AutocastQuery& q) {
    return q.device == AutocastDevice::cuda ? AutocastClass::float32 : AutocastClass::follows;
  };
  d.traits = OpTraits{};
  d.onnx_export = upsample_onnx;
  d.peer_module = "nn.Upsample";
  return d;
}

}  // namespace convbench

// Each convbench op as ONNX opset-17 nodes computing its inference forward (lib/onnx/README.md
// has the table). Where ONNX has the op itself, the node is the one the importer
// (onnx_nodes.cpp) reads back as the same op, named after it, with its weights named as
// convbench's parameters; where it has not (group_norm, pixel_unshuffle's order, a 3-D
// space_to_depth), the op is written as PyTorch's exporter writes it, with Reshape and Transpose.
#include <algorithm>

#include "graph/fold_program.hpp"
#include "onnx/onnx_export.hpp"
#include "onnx/onnx_writer.hpp"
#include "ops/fold_eval.hpp"

namespace convbench {
namespace {

using W = OnnxWriter;

const TensorDesc& in_desc(const W& w, const Op& op, size_t k = 0) { return w.graph.desc(op.inputs.at(k)); }
const TensorDesc& out_desc(const W& w, const Op& op) { return w.graph.desc(op.output); }
std::string in(const W& w, const Op& op, size_t k = 0) { return w.tensor(op.inputs.at(k)); }
std::string out(const W& w, const Op& op) { return w.tensor(op.output); }

std::vector<int64_t> twice(const std::vector<int64_t>& v) {
  std::vector<int64_t> p = v;
  p.insert(p.end(), v.begin(), v.end());  // ONNX pads: every begin, then every end
  return p;
}

// A parameter (or a frozen conv's buffer) as an initializer under its own name.
std::string param_tensor(W& w, int id) {
  const Param& p = w.graph.params.at(static_cast<size_t>(id));
  return w.weights(p.name, p.desc.shape, w.param(id));
}
std::string buffer_tensor(W& w, int id) {
  const Param& b = w.graph.buffers.at(static_cast<size_t>(id));
  return w.weights(b.name, b.desc.shape, w.buffer(id));
}

void conv_nodes(W& w, const Op& op, const ConvAttrs& a, const std::vector<std::string>& weights, bool transpose) {
  std::vector<std::string> inputs = {in(w, op)};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  onnx::NodeProto& n = w.node(transpose ? "ConvTranspose" : "Conv", op.name, inputs, {out(w, op)});
  W::ints(n, "kernel_shape", a.kernel);
  W::ints(n, "strides", a.stride);
  W::ints(n, "pads", twice(a.padding));
  W::ints(n, "dilations", a.dilation);
  W::integer(n, "group", a.groups);
  if (transpose && std::any_of(a.output_padding.begin(), a.output_padding.end(), [](int64_t p) { return p != 0; }))
    W::ints(n, "output_padding", a.output_padding);
}

void conv(W& w, const Op& op) {
  // A frozen conv's weight and bias are buffers; in the file both are initializers alike.
  std::vector<std::string> weights;
  for (const int id : op.conv.frozen ? op.buffers : op.params)
    weights.push_back(op.conv.frozen ? buffer_tensor(w, id) : param_tensor(w, id));
  conv_nodes(w, op, op.conv, weights, op.kind == OpKind::conv_transpose);
}

// The folded conv's kernel and bias, composed from its parameters by its fold program (what every
// backend computes at each step), written as the plain conv they make.
void folded_conv(W& w, const Op& op) {
  const FoldProgram& p = *op.fold;
  std::vector<const double*> operands;
  for (const int id : op.params) operands.push_back(w.param(id).data());
  std::vector<double> registers(static_cast<size_t>(FoldLayout(p).elements));
  const TensorDesc kernel = fold_kernel_desc(p, DType::float64);
  std::vector<double> weight(static_cast<size_t>(kernel.numel())), bias(static_cast<size_t>(p.out().out_channels));
  fold_forward(p, operands, registers.data(), weight.data(), bias.data());
  std::vector<std::string> weights = {w.weights(w.fresh(op.name + ".weight"), kernel.shape, weight)};
  if (p.has_bias()) weights.push_back(w.weights(w.fresh(op.name + ".bias"), {p.out().out_channels}, bias));
  const Op plain = folded_conv_as_conv(op);
  conv_nodes(w, op, plain.conv, weights, false);
}

std::string batch_norm_node(W& w, const Op& op, const std::string& output) {
  onnx::NodeProto& n = w.node("BatchNormalization", op.name,
                              {in(w, op), param_tensor(w, op.params.at(0)), param_tensor(w, op.params.at(1)),
                               buffer_tensor(w, op.buffers.at(0)), buffer_tensor(w, op.buffers.at(1))},
                              {output});
  W::number(n, "epsilon", op.norm.eps);
  W::number(n, "momentum", 1 - op.norm.momentum);  // ONNX keeps momentum x old: PyTorch's 1 - momentum
  return output;
}

// PyTorch's exporter's group norm: the groups as instances, then the per-channel affine.
void group_norm(W& w, const Op& op) {
  const TensorDesc& x = in_desc(w, op);
  const int64_t groups = op.norm.groups, c = x.channels();
  const std::string grouped = w.fresh(op.name + "/grouped"), normed = w.fresh(op.name + "/normalized"),
                    back = w.fresh(op.name + "/ungrouped"), scaled = w.fresh(op.name + "/scaled");
  // As PyTorch's exporter writes it (and convbench's importer reads it back as one group_norm):
  // to (N, G, -1) with 0 copying the batch, and back to the input's own Shape.
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".grouped_shape", {0, groups, -1})},
         {grouped});
  onnx::NodeProto& inorm = w.node(
      "InstanceNormalization", w.fresh(op.name + "/InstanceNormalization"),
      {grouped,
       w.weights(w.fresh(op.name + ".group_scale"), {groups}, std::vector<double>(static_cast<size_t>(groups), 1)),
       w.weights(w.fresh(op.name + ".group_bias"), {groups}, std::vector<double>(static_cast<size_t>(groups), 0))},
      {normed});
  W::number(inorm, "epsilon", op.norm.eps);
  const std::string shape = w.fresh(op.name + "/shape");
  w.node("Shape", w.fresh(op.name + "/Shape"), {in(w, op)}, {shape});
  w.node("Reshape", w.fresh(op.name + "/Reshape_1"), {normed, shape}, {back});
  std::vector<int64_t> affine(static_cast<size_t>(x.rank() - 1), 1);
  affine[0] = c;  // (C, 1, ...): broadcast over the spatial dims
  const Param& weight = w.graph.params.at(static_cast<size_t>(op.params.at(0)));
  const Param& bias = w.graph.params.at(static_cast<size_t>(op.params.at(1)));
  w.node("Mul", w.fresh(op.name + "/Mul"), {back, w.weights(weight.name, affine, w.param(op.params.at(0)))}, {scaled});
  w.node("Add", op.name, {scaled, w.weights(bias.name, affine, w.param(op.params.at(1)))}, {out(w, op)});
}

// layer_norm as torchvision's LayerNorm2d exports it: Transpose to channels-last, LayerNormalization
// over the last axis (opset 17) with the weight and bias, Transpose back.
void layer_norm(W& w, const Op& op) {
  const int rank = in_desc(w, op).rank();
  std::vector<int64_t> to_last = {0}, back = {0, rank - 1};
  for (int64_t a = 2; a < rank; ++a) to_last.push_back(a);
  to_last.push_back(1);
  for (int64_t a = 1; a < rank - 1; ++a) back.push_back(a);
  const std::string last = w.fresh(op.name + "/channels_last"), normed = w.fresh(op.name + "/normalized");
  W::ints(w.node("Transpose", w.fresh(op.name + "/Transpose"), {in(w, op)}, {last}), "perm", to_last);
  const Param& weight = w.graph.params.at(static_cast<size_t>(op.params.at(0)));
  const Param& bias = w.graph.params.at(static_cast<size_t>(op.params.at(1)));
  const int64_t c = weight.desc.numel();
  onnx::NodeProto& ln = w.node("LayerNormalization", w.fresh(op.name + "/LayerNormalization"),
                               {last, w.weights(weight.name, {c}, w.param(op.params.at(0))),
                                w.weights(bias.name, {c}, w.param(op.params.at(1)))},
                               {normed});
  W::integer(ln, "axis", -1);
  W::number(ln, "epsilon", op.norm.eps);
  W::ints(w.node("Transpose", op.name, {normed}, {out(w, op)}), "perm", back);
}

// layer_scale as ConvNeXt's `layer_scale * x` exports: Mul by the (C, 1, ...) parameter.
void layer_scale(W& w, const Op& op) {
  std::vector<int64_t> shape(static_cast<size_t>(in_desc(w, op).rank() - 1), 1);
  const Param& weight = w.graph.params.at(static_cast<size_t>(op.params.at(0)));
  shape[0] = weight.desc.numel();
  w.node("Mul", op.name, {w.weights(weight.name, shape, w.param(op.params.at(0))), in(w, op)}, {out(w, op)});
}

// channel_shuffle as ShuffleNetV2's view-transpose-view exports: Reshape to (N, g, C/g, ...),
// Transpose the two group axes, Reshape back.
void channel_shuffle(W& w, const Op& op) {
  const TensorDesc& x = in_desc(w, op);
  const int64_t g = op.shuffle_groups;
  std::vector<int64_t> split = {x.batch(), g, x.channels() / g}, perm = {0, 2, 1};
  for (int i = 2; i < x.rank(); ++i) {
    split.push_back(x.shape[static_cast<size_t>(i)]);
    perm.push_back(i + 1);
  }
  const std::string split_t = w.fresh(op.name + "/split"), moved = w.fresh(op.name + "/moved");
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".split_shape", split)}, {split_t});
  W::ints(w.node("Transpose", w.fresh(op.name + "/Transpose"), {split_t}, {moved}), "perm", perm);
  w.node("Reshape", op.name, {moved, w.int64s(op.name + ".shape", x.shape)}, {out(w, op)});
}

void pool(W& w, const Op& op) {
  onnx::NodeProto& n =
      w.node(op.kind == OpKind::max_pool ? "MaxPool" : "AveragePool", op.name, {in(w, op)}, {out(w, op)});
  W::ints(n, "kernel_shape", op.pool.kernel);
  W::ints(n, "strides", op.pool.stride);
  W::ints(n, "pads", twice(op.pool.padding));
  if (op.kind == OpKind::avg_pool) W::integer(n, "count_include_pad", 1);  // convbench's (PyTorch's) divisor
}

// Resize as PyTorch's interpolate: nearest is floor(dst / scale) (asymmetric, floor); linear is
// half_pixel (PyTorch's variant of it) or align_corners.
void upsample(W& w, const Op& op) {
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
  onnx::NodeProto& n = w.node("Resize", op.name, inputs, {out(w, op)});
  if (op.upsample_linear) {
    W::text(n, "mode", "linear");
    W::text(n, "coordinate_transformation_mode", op.align_corners ? "align_corners" : "pytorch_half_pixel");
  } else {
    W::text(n, "mode", "nearest");
    W::text(n, "coordinate_transformation_mode", "asymmetric");
    W::text(n, "nearest_mode", "floor");
  }
}

// The 2-D block-major order is ONNX's SpaceToDepth; every other case splits each spatial dim into
// (size / b, b), moves the offsets next to the channels (before them: block-major; after them:
// channel-major, pixel_unshuffle's) and merges them into the channels.
void space_to_depth(W& w, const Op& op) {
  const TensorDesc& x = in_desc(w, op);
  const int d = x.spatial_rank();
  const int64_t b = op.space_to_depth.block_size;
  const bool block_major = op.space_to_depth.order == SpaceToDepthOrder::block_major;
  if (d == 2 && block_major) {
    W::integer(w.node("SpaceToDepth", op.name, {in(w, op)}, {out(w, op)}), "blocksize", b);
    return;
  }
  std::vector<int64_t> split = {x.batch(), x.channels()};
  for (int i = 0; i < d; ++i) {
    split.push_back(x.shape[static_cast<size_t>(2 + i)] / b);
    split.push_back(b);
  }
  // Axes of `split`: 0 N, 1 C, then (2 + 2i) the i-th outer size and (3 + 2i) its offset.
  std::vector<int64_t> perm = {0};
  std::vector<int64_t> offsets, outers;
  for (int i = 0; i < d; ++i) {
    outers.push_back(2 + 2 * i);
    offsets.push_back(3 + 2 * i);
  }
  if (!block_major) perm.push_back(1);
  perm.insert(perm.end(), offsets.begin(), offsets.end());
  if (block_major) perm.push_back(1);
  perm.insert(perm.end(), outers.begin(), outers.end());
  const std::string split_t = w.fresh(op.name + "/split"), moved = w.fresh(op.name + "/moved");
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".split_shape", split)}, {split_t});
  W::ints(w.node("Transpose", w.fresh(op.name + "/Transpose"), {split_t}, {moved}), "perm", perm);
  w.node("Reshape", op.name, {moved, w.int64s(op.name + ".shape", out_desc(w, op).shape)}, {out(w, op)});
}

// depth_to_space: ONNX's DepthToSpace in 2-D (mode CRD for the channel-major order, pixel_shuffle's;
// DCR for the block-major one); in 3-D, where DepthToSpace is not defined, the channels split into
// the block's offsets and the output channels, each offset moved beside its spatial dim.
void depth_to_space(W& w, const Op& op) {
  const TensorDesc& x = in_desc(w, op);
  const int d = x.spatial_rank();
  const int64_t b = op.space_to_depth.block_size;
  const bool block_major = op.space_to_depth.order == SpaceToDepthOrder::block_major;
  if (d == 2) {
    auto& n = w.node("DepthToSpace", op.name, {in(w, op)}, {out(w, op)});
    W::integer(n, "blocksize", b);
    W::text(n, "mode", block_major ? "DCR" : "CRD");
    return;
  }
  const int64_t channels = out_desc(w, op).channels();
  std::vector<int64_t> split = {x.batch()};
  if (!block_major) split.push_back(channels);
  for (int i = 0; i < d; ++i) split.push_back(b);
  if (block_major) split.push_back(channels);
  for (int i = 0; i < d; ++i) split.push_back(x.shape[static_cast<size_t>(2 + i)]);
  // Axes of `split`: 0 N; the channel axis (1, or d + 1 when block-major); the offsets; then the
  // spatial sizes at 2 + d + i. The result interleaves each size with its offset.
  const int64_t channel_axis = block_major ? d + 1 : 1, first_offset = block_major ? 1 : 2;
  std::vector<int64_t> perm = {0, channel_axis};
  for (int i = 0; i < d; ++i) {
    perm.push_back(2 + d + i);
    perm.push_back(first_offset + i);
  }
  const std::string split_t = w.fresh(op.name + "/split"), moved = w.fresh(op.name + "/moved");
  w.node("Reshape", w.fresh(op.name + "/Reshape"), {in(w, op), w.int64s(op.name + ".split_shape", split)}, {split_t});
  W::ints(w.node("Transpose", w.fresh(op.name + "/Transpose"), {split_t}, {moved}), "perm", perm);
  w.node("Reshape", op.name, {moved, w.int64s(op.name + ".shape", out_desc(w, op).shape)}, {out(w, op)});
}

// Flatten + Gemm is nn.Linear's export; the Reshape keeps convbench's (N, out, 1, ...) shape for
// the ops after it. When the linear is the graph's output, onnx_export.cpp declares the output
// (N, out) instead and the Reshape is left out: a classifier's logits, as PyTorch's export has them.
void linear(W& w, const Op& op) {
  const std::string flat = w.fresh(op.name + "/flat");
  w.node("Flatten", w.fresh(op.name + "/Flatten"), {in(w, op)}, {flat});
  std::vector<std::string> inputs = {flat};
  for (const int id : op.params) inputs.push_back(param_tensor(w, id));
  const bool last = op.output == w.graph.output;
  const std::string gemm = last ? out(w, op) : w.fresh(op.name + "/gemm");
  W::integer(w.node("Gemm", op.name, inputs, {gemm}), "transB", 1);
  if (!last)
    w.node("Reshape", w.fresh(op.name + "/Reshape"), {gemm, w.int64s(op.name + ".shape", out_desc(w, op).shape)},
           {out(w, op)});
}

void unary(W& w, const Op& op, const std::string& type) { w.node(type, op.name, {in(w, op)}, {out(w, op)}); }

// A scalar float constant (an initializer of shape []), as PyTorch's exporter writes them.
std::string scalar(W& w, const Op& op, const std::string& what, double v) {
  return w.floats(op.name + "." + what, {}, {static_cast<float>(v)});
}

// nn.SiLU as PyTorch exports it at opset 17: Sigmoid, then Mul by the input.
void silu(W& w, const Op& op) {
  const std::string gate = w.fresh(op.name + "/sigmoid");
  w.node("Sigmoid", w.fresh(op.name + "/Sigmoid"), {in(w, op)}, {gate});
  w.node("Mul", op.name, {in(w, op), gate}, {out(w, op)});
}

// nn.GELU as PyTorch exports it before opset 20's Gelu: x * (1 + erf(x / sqrt(2))) * 0.5, or
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) for approximate="tanh".
void gelu(W& w, const Op& op) {
  const std::string x = in(w, op);
  auto binary = [&](const char* type, const std::string& a, const std::string& b, const std::string& result = "") {
    const std::string y = result.empty() ? w.fresh(op.name + "/" + type) : result;
    w.node(type, result.empty() ? w.fresh(op.name + "/" + std::string(type)) : op.name, {a, b}, {y});
    return y;
  };
  if (op.gelu_approximate == GeluApproximation::tanh) {
    const std::string cube = binary("Mul", x, binary("Mul", x, x));
    const std::string inner = binary("Mul", scalar(w, op, "beta", 0.7978845608028654),
                                     binary("Add", x, binary("Mul", scalar(w, op, "kappa", 0.044715), cube)));
    const std::string t = w.fresh(op.name + "/tanh");
    w.node("Tanh", w.fresh(op.name + "/Tanh"), {inner}, {t});
    binary("Mul", scalar(w, op, "half", 0.5), binary("Mul", x, binary("Add", scalar(w, op, "one", 1.0), t)),
           out(w, op));
    return;
  }
  const std::string scaled = binary("Div", x, scalar(w, op, "sqrt_two", 1.4142135623730951));
  const std::string e = w.fresh(op.name + "/erf");
  w.node("Erf", w.fresh(op.name + "/Erf"), {scaled}, {e});
  const std::string plus_one = binary("Add", e, scalar(w, op, "one", 1.0));
  binary("Mul", binary("Mul", x, plus_one), scalar(w, op, "half", 0.5), out(w, op));
}

}  // namespace

void write_onnx_op(OnnxWriter& w, const Op& op) {
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::conv_transpose: conv(w, op); return;
    case OpKind::folded_conv: folded_conv(w, op); return;
    case OpKind::linear: linear(w, op); return;
    case OpKind::batch_norm: batch_norm_node(w, op, out(w, op)); return;
    case OpKind::batch_norm_act: {  // Inplace-ABN's fused op: the norm, then its leaky ReLU
      const std::string normed = batch_norm_node(w, op, w.fresh(op.name + "/normalized"));
      W::number(w.node("LeakyRelu", w.fresh(op.name + "/LeakyRelu"), {normed}, {out(w, op)}), "alpha",
                op.negative_slope);
      return;
    }
    case OpKind::group_norm: group_norm(w, op); return;
    case OpKind::layer_norm: layer_norm(w, op); return;
    case OpKind::layer_scale: layer_scale(w, op); return;
    case OpKind::channel_shuffle: channel_shuffle(w, op); return;
    case OpKind::relu: unary(w, op, "Relu"); return;
    case OpKind::sigmoid: unary(w, op, "Sigmoid"); return;
    case OpKind::silu: silu(w, op); return;
    case OpKind::hardswish: unary(w, op, "HardSwish"); return;
    case OpKind::hardsigmoid:  // ONNX's default alpha is 0.2; PyTorch's is 1/6 (written as a float)
      W::number(w.node("HardSigmoid", op.name, {in(w, op)}, {out(w, op)}), "alpha", 1.0 / 6.0);
      return;
    case OpKind::relu6:  // nn.ReLU6 as PyTorch exports it: Clip with constant bounds
      w.node("Clip", op.name, {in(w, op), scalar(w, op, "min", 0.0), scalar(w, op, "max", 6.0)}, {out(w, op)});
      return;
    case OpKind::gelu: gelu(w, op); return;
    case OpKind::leaky_relu:
      W::number(w.node("LeakyRelu", op.name, {in(w, op)}, {out(w, op)}), "alpha", op.negative_slope);
      return;
    case OpKind::dropout:
    case OpKind::channel_dropout:
      // Inference: the identity either way. ONNX has no channel-wise dropout; a Dropout node keeps
      // the ratio visible (and is what the importer reads back as convbench's dropout).
      w.node("Dropout", op.name, {in(w, op), w.floats(op.name + ".ratio", {}, {static_cast<float>(op.dropout_p)})},
             {out(w, op)});
      return;
    case OpKind::drop_path:  // the identity in inference, where StochasticDepth returns its input and writes no node
      unary(w, op, "Identity");
      return;
    case OpKind::add: w.node("Add", op.name, {in(w, op, 0), in(w, op, 1)}, {out(w, op)}); return;
    case OpKind::sub: w.node("Sub", op.name, {in(w, op, 0), in(w, op, 1)}, {out(w, op)}); return;
    case OpKind::mul: w.node("Mul", op.name, {in(w, op, 0), in(w, op, 1)}, {out(w, op)}); return;
    case OpKind::concat: {
      std::vector<std::string> inputs;
      for (size_t k = 0; k < op.inputs.size(); ++k) inputs.push_back(in(w, op, k));
      W::integer(w.node("Concat", op.name, inputs, {out(w, op)}), "axis", 1);
      return;
    }
    case OpKind::slice:
      w.node("Slice", op.name,
             {in(w, op), w.int64s(op.name + ".starts", {op.slice.start}),
              w.int64s(op.name + ".ends", {op.slice.start + op.slice.length}), w.int64s(op.name + ".axes", {1})},
             {out(w, op)});
      return;
    case OpKind::max_pool:
    case OpKind::avg_pool: pool(w, op); return;
    case OpKind::global_avg_pool: unary(w, op, "GlobalAveragePool"); return;
    case OpKind::upsample: upsample(w, op); return;
    case OpKind::convert_layout: unary(w, op, "Identity"); return;  // ONNX tensors are logical NCHW
    case OpKind::space_to_depth: space_to_depth(w, op); return;
    case OpKind::depth_to_space: depth_to_space(w, op); return;
    case OpKind::cast:
      // Mixed precision is how a step runs (torch.autocast), not a model's own: the model is the
      // float32 graph, which the same variant with `precision: plain` builds.
      throw OnnxExportError(op.name, "a cast that mixed precision inserts: export the variant with precision: plain");
  }
  throw OnnxExportError(op.name, "op kind " + std::string(to_string(op.kind)) + " has no ONNX form");
}

}  // namespace convbench

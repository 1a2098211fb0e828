// Convolution and transposed convolution, forward, backward-data and backward-weights, through
// oneDNN's convolution and deconvolution primitives.
//
// Formats (measured on this machine's AVX-512 cores with oneDNN 2.6, the seed block shapes):
// - channels_last activations are handed to oneDNN as they are: its nhwc/ndhwc kernels (jit,
//   brgconv) are fast, and no copy is needed.
// - channels_first activations are reordered into the blocked format the primitive picks
//   (nChw16c), as PyTorch's ideep path does: oneDNN's plain-nchw convolutions are im2col + gemm,
//   several times slower (their backward-weights especially), which the reorders more than repay.
// - weights are always reordered from ours ((Cout, Cin/g, k...) in the input's layout) into the
//   primitive's preferred blocked format per call (they are small); grad-weight is computed
//   blocked and reordered into our gradient tensor.
// In backward, the reordered grad_output is made once and read by both backward-data and
// backward-weights.
// Under --conv-fusion conv_act (backends/conv_fusion.hpp) a conv's forward takes the in-place
// activation after it as an eltwise post-op: oneDNN applies it to each output before storing it.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "backends/cpu/onednn_ops.hpp"

namespace convbench::cpu {
namespace {

using dnnl::memory;

// The tensors of a call, numbered for Operand::source.
enum ForwardSource { kFwdX, kFwdW, kFwdB, kFwdY };
enum BackwardSource { kBwdX, kBwdW, kBwdDy, kBwdDx, kBwdDw, kBwdDb };

// oneDNN's view of one conv or conv_transpose op.
struct ConvGeometry {
  memory::desc src, dst;  // the executor's activation formats
  memory::desc weights;   // our plain weights, as oneDNN dims
  memory::desc bias;      // zero desc without bias
  memory::dims strides, dilates, pad_l, pad_r;
};

ConvGeometry geometry(const Graph& graph, const Op& op) {
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const TensorDesc& out = graph.desc(op.output);
  const ConvAttrs& a = op.conv;
  const bool transposed = op.kind == OpKind::conv_transpose;
  ConvGeometry g;
  // Under mixed precision the activations are bfloat16 and the weights are the op's cast copies
  // (Op::param_cast): oneDNN computes in bfloat16 with float32 accumulation, as PyTorch's
  // mkldnn path does under CPU autocast.
  g.src = activation_md(in, onednn_type(in.dtype));
  g.dst = activation_md(out, onednn_type(out.dtype));
  const memory::data_type weight_type = onednn_type(op.param_cast.value_or(DType::float32));
  // oneDNN numbers weights (groups?, out, in, k...), where "out" is the primitive's output
  // channels. Our conv weights are (Cout, Cin/g, k...); our conv_transpose weights are PyTorch's
  // (Cin, Cout/g, k...). Their memory order is ConvAttrs::weight_layout: the input's for a conv's
  // own weight, channels_first for a folded kernel. As strides, every case is one desc.
  const int64_t first = transposed ? in.channels() : out.channels();
  const int64_t second = (transposed ? out.channels() : in.channels()) / a.groups;
  TensorDesc weight{{first, second}, DType::float32, a.weight_layout};  // dtype: strides only
  weight.shape.insert(weight.shape.end(), a.kernel.begin(), a.kernel.end());
  const std::vector<int64_t> ws = weight.strides();
  const int64_t groups = a.groups;
  const int64_t per_group = weight.shape[0] / groups;  // dim 0's channels in one group
  const size_t out_dim = transposed ? 1 : 0, in_dim = transposed ? 0 : 1;
  memory::dims wdims, wstrides;
  if (groups > 1) {
    wdims.push_back(groups);
    wstrides.push_back(per_group * ws[0]);
  }
  wdims.push_back(transposed ? weight.shape[1] : per_group);
  wstrides.push_back(ws[out_dim]);
  wdims.push_back(transposed ? per_group : weight.shape[1]);
  wstrides.push_back(ws[in_dim]);
  for (size_t d = 2; d < weight.shape.size(); ++d) {
    wdims.push_back(weight.shape[d]);
    wstrides.push_back(ws[d]);
  }
  g.weights = memory::desc(wdims, weight_type, wstrides);
  if (a.bias) g.bias = vector_md(out.channels(), weight_type);
  for (size_t d = 0; d < a.kernel.size(); ++d) {
    g.strides.push_back(a.stride[d]);
    g.dilates.push_back(a.dilation[d] - 1);  // oneDNN counts dilation from 0
    g.pad_l.push_back(a.padding[d]);
    int64_t pad_r = a.padding[d];
    if (transposed) {
      // oneDNN checks (big - kernel_extent + pad_l + pad_r) / stride + 1 == small, so output
      // padding below the stride is absorbed by the division; beyond it, pad_r must shrink.
      const int64_t op_pad = a.output_padding.empty() ? 0 : a.output_padding[d];
      pad_r = std::min(pad_r, a.padding[d] - op_pad + a.stride[d] - 1);
    }
    g.pad_r.push_back(pad_r);
  }
  return g;
}

memory::desc any_like(const memory::desc& md) {
  return memory::desc(md.dims(), md.data_type(), memory::format_tag::any);
}

// Creates the primitive descriptors of one family (convolution or deconvolution).
template <class Fwd, class BwdData, class BwdWeights>
struct Factory {
  const ConvGeometry& g;
  dnnl::algorithm algorithm;
  const dnnl::engine& engine;
  const dnnl::primitive_attr& attr;

  memory::desc act(const memory::desc& md, bool any) const { return any ? any_like(md) : md; }

  typename Fwd::primitive_desc forward(dnnl::prop_kind prop, bool any) const {
    if (prop == dnnl::prop_kind::forward_inference && any) {
      // Left free, inference picks nhwc and brgconv for channels_first tensors, which measured
      // slower (1x1 ResNet conv: 10.9 vs 7.9 ms) than the blocked nChw16c training picks.
      const auto training = forward(dnnl::prop_kind::forward_training, true);
      return forward(prop, training.src_desc(), training.dst_desc());
    }
    return forward(prop, act(g.src, any), act(g.dst, any));
  }
  typename Fwd::primitive_desc forward(dnnl::prop_kind prop, const memory::desc& src, const memory::desc& dst) const {
    const memory::desc w = any_like(g.weights);
    if (g.bias.get_size() > 0) {
      typename Fwd::desc d(prop, algorithm, src, w, g.bias, dst, g.strides, g.dilates, g.pad_l, g.pad_r);
      return typename Fwd::primitive_desc(d, attr, engine);
    }
    typename Fwd::desc d(prop, algorithm, src, w, dst, g.strides, g.dilates, g.pad_l, g.pad_r);
    return typename Fwd::primitive_desc(d, attr, engine);
  }
  typename BwdData::primitive_desc backward_data(bool any) const {
    typename BwdData::desc d(algorithm, act(g.src, any), any_like(g.weights), act(g.dst, any), g.strides, g.dilates,
                             g.pad_l, g.pad_r);
    return typename BwdData::primitive_desc(d, attr, engine, forward(dnnl::prop_kind::forward_training, any));
  }
  typename BwdWeights::primitive_desc backward_weights(bool any) const {
    const auto hint = forward(dnnl::prop_kind::forward_training, any);
    if (g.bias.get_size() > 0) {
      typename BwdWeights::desc d(algorithm, act(g.src, any), any_like(g.weights), g.bias, act(g.dst, any), g.strides,
                                  g.dilates, g.pad_l, g.pad_r);
      return typename BwdWeights::primitive_desc(d, attr, engine, hint);
    }
    typename BwdWeights::desc d(algorithm, act(g.src, any), any_like(g.weights), act(g.dst, any), g.strides, g.dilates,
                                g.pad_l, g.pad_r);
    return typename BwdWeights::primitive_desc(d, attr, engine, hint);
  }
};

// Tries the activation formats in order of measured speed (see the top of the file) and returns
// the first primitive descriptor that is not oneDNN's slow reference implementation (or the
// first that exists, when all are).
template <class Make>
auto best(Layout layout, const Make& make) {
  const bool first_any = layout == Layout::channels_first;
  std::optional<decltype(make(first_any))> fallback;
  for (bool any : {first_any, !first_any}) {
    try {
      auto pd = make(any);
      if (!is_reference_impl(pd)) return pd;
      if (!fallback) fallback = pd;
    } catch (const dnnl::error&) {
      // this format combination is not implemented; try the next
    }
  }
  if (!fallback) throw std::runtime_error("oneDNN has no implementation for this convolution");
  return *fallback;
}

// The attributes of a fused forward: user-managed scratchpads, as every primitive's, and the
// activation as an eltwise post-op on the accumulated (and biased) outputs before they are stored.
// oneDNN's eltwise algorithm for a fused epilogue's activation: relu with alpha is leaky_relu's
// negative slope (0 for relu); logistic is the sigmoid.
dnnl::algorithm eltwise_algorithm(ConvEpilogueAct act) {
  switch (act) {
    case ConvEpilogueAct::relu:
    case ConvEpilogueAct::leaky_relu: return dnnl::algorithm::eltwise_relu;
    case ConvEpilogueAct::sigmoid: return dnnl::algorithm::eltwise_logistic;
  }
  throw std::logic_error("onednn_conv: no eltwise algorithm for this epilogue");
}

dnnl::primitive_attr fused_attr(const ConvEpilogue& e) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops post;
  post.append_eltwise(1.0f, eltwise_algorithm(e.function), static_cast<float>(e.negative_slope), 0.0f);
  attr.set_post_ops(post);
  return attr;
}

std::string conv_key(const Graph& graph, const Op& op, Phase phase, bool training, bool grad_input,
                     const std::optional<ConvEpilogue>& epilogue) {
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const ConvAttrs& a = op.conv;
  std::string key = std::string(to_string(op.kind)) + (phase == Phase::forward ? "|f" : "|b") + (training ? "t" : "i") +
                    (grad_input ? "g|" : "|") + in.shape_string() + (in.layout == Layout::channels_last ? "L" : "F") +
                    (a.weight_layout == Layout::channels_last ? "L" : "F") + "|" + std::to_string(a.out_channels) +
                    "|" + std::to_string(a.groups) + (a.bias ? "b" : "") + (a.frozen ? "z" : "") + "|" +
                    std::string(to_string(in.dtype)) + std::string(op.param_cast ? to_string(*op.param_cast) : "");
  for (const auto* v : {&a.kernel, &a.stride, &a.padding, &a.dilation, &a.output_padding}) {
    key += "|";
    for (int64_t x : *v) key += std::to_string(x) + ",";
  }
  if (epilogue) key += "|" + epilogue->name();
  return key;
}

}  // namespace

std::optional<ConvEpilogue> OneDnnOps::fused_epilogue(const Graph& graph, const Op& op, Phase phase) const {
  if (!fuses_activations(fusion_) || phase != Phase::forward) return std::nullopt;
  return conv_act_fusion(graph, op_index(graph, op));
}

const Plan& OneDnnOps::conv_plan(const Graph& graph, const Op& op, Phase phase, bool training, bool grad_input) {
  const std::string key = conv_key(graph, op, phase, training, grad_input, fused_epilogue(graph, op, phase));
  auto it = plans_.find(key);
  if (it == plans_.end()) it = plans_.emplace(key, build_conv_plan(graph, op, phase, training, grad_input)).first;
  return it->second;
}

Plan OneDnnOps::build_conv_plan(const Graph& graph, const Op& op, Phase phase, bool training, bool grad_input) {
  const ConvGeometry g = geometry(graph, op);
  const Layout layout = graph.desc(op.inputs.at(0)).layout;
  const bool has_bias = op.conv.bias;
  const std::optional<ConvEpilogue> epilogue = fused_epilogue(graph, op, phase);
  const dnnl::primitive_attr attr = epilogue ? fused_attr(*epilogue) : attr_;
  Plan plan;
  auto build = [&](const auto& factory) {
    if (phase == Phase::forward) {
      const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
      const auto pd = best(layout, [&](bool any) { return factory.forward(prop, any); });
      std::vector<Operand> ops = {operand(DNNL_ARG_SRC, kFwdX, false, g.src),
                                  operand(DNNL_ARG_WEIGHTS, kFwdW, false, g.weights),
                                  operand(DNNL_ARG_DST, kFwdY, true, g.dst)};
      if (has_bias) ops.push_back(operand(DNNL_ARG_BIAS, kFwdB, false, g.bias));
      add_step(plan, pd, std::move(ops));
      return;
    }
    if (grad_input) {
      const auto pd = best(layout, [&](bool any) { return factory.backward_data(any); });
      add_step(plan, pd,
               {operand(DNNL_ARG_DIFF_DST, kBwdDy, false, g.dst), operand(DNNL_ARG_WEIGHTS, kBwdW, false, g.weights),
                operand(DNNL_ARG_DIFF_SRC, kBwdDx, true, g.src)});
    }
    if (op.conv.frozen) return;  // no weight or bias gradient
    const auto pd = best(layout, [&](bool any) { return factory.backward_weights(any); });
    std::vector<Operand> ops = {operand(DNNL_ARG_SRC, kBwdX, false, g.src),
                                operand(DNNL_ARG_DIFF_DST, kBwdDy, false, g.dst),
                                operand(DNNL_ARG_DIFF_WEIGHTS, kBwdDw, true, g.weights)};
    if (has_bias) ops.push_back(operand(DNNL_ARG_DIFF_BIAS, kBwdDb, true, g.bias));
    add_step(plan, pd, std::move(ops));
  };
  if (op.kind == OpKind::conv_transpose)
    build(Factory<dnnl::deconvolution_forward, dnnl::deconvolution_backward_data, dnnl::deconvolution_backward_weights>{
        g, dnnl::algorithm::deconvolution_direct, engine_, attr});
  else
    build(Factory<dnnl::convolution_forward, dnnl::convolution_backward_data, dnnl::convolution_backward_weights>{
        g, dnnl::algorithm::convolution_direct, engine_, attr});
  place(plan);
  return plan;
}

void OneDnnOps::conv_forward(const ForwardCall& call) {
  const Plan& plan = conv_plan(call.graph, call.op, Phase::forward, call.training, false);
  std::vector<void*> tensors(4, nullptr);
  tensors[kFwdX] = call.inputs.at(0)->raw();
  const std::vector<const Tensor*> weights = conv_weights(call);
  tensors[kFwdW] = weights.at(0)->raw();
  if (call.op.conv.bias) tensors[kFwdB] = weights.at(1)->raw();
  tensors[kFwdY] = call.output->raw();
  run(plan, tensors, call.workspace);
}

void OneDnnOps::conv_backward(const BackwardCall& call) {
  const bool grad_input = call.grad_inputs.at(0) != nullptr;
  // workspace_bytes() sized the workspace from the graph's gradient requirements; an input
  // gradient the graph does not ask for would need more than the executor allocated.
  if (grad_input && !call.graph.values.at(static_cast<size_t>(call.op.inputs.at(0))).requires_grad)
    throw std::logic_error(call.op.name +
                           ": input gradient requested for a value the graph says "
                           "needs none (workspace_bytes() did not include backward-data)");
  const Plan& plan = conv_plan(call.graph, call.op, Phase::backward, true, grad_input);
  std::vector<void*> tensors(6, nullptr);
  tensors[kBwdX] = call.inputs.at(0)->raw();
  tensors[kBwdW] = conv_weights(call).at(0)->raw();
  tensors[kBwdDy] = call.grad_output->raw();
  if (grad_input) tensors[kBwdDx] = call.grad_inputs[0]->raw();
  if (!call.op.conv.frozen) {  // a frozen conv's plan has no backward-weights step
    tensors[kBwdDw] = call.grad_params.at(0)->raw();
    if (call.op.conv.bias) tensors[kBwdDb] = call.grad_params.at(1)->raw();
  }
  run(plan, tensors, call.workspace);
}

}  // namespace convbench::cpu

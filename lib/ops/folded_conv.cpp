// folded_conv: one conv whose kernel is computed, inside every step, from the weights of the
// linear subgraph it replaces (fold: online, OREPA). Its parameters are the source's branch
// weights; `op.fold` is the program that composes them (graph/fold_program.hpp) and `op.conv` the
// folded conv's geometry. lib/transforms/ makes it; a spec cannot name it (spec_op false).
//
// Forward computes the kernel K (and bias) from the parameters, then runs the conv. Backward runs
// the conv's backward (into dK) and the program's adjoint (into each parameter's gradient).
// Saving rule: the input, as a conv does, and K as an aux tensor: what PyTorch's autograd keeps
// for F.conv2d(x, K, b) when K is computed from the parameters (the registers of the
// composition are recomputed in backward, not kept; the bias is not needed by backward).
// Work: the conv's MACs, plus the composition's: forward once, backward three times (recomputing
// the registers, then the weight and register gradients of each composed conv).
#include "graph/fold_program.hpp"
#include "ops/fold_eval.hpp"
#include "ops/onnx_export_helpers.hpp"
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {
namespace {

const FoldProgram& program_of(const Op& op) {
  require(op.fold != nullptr, op.name, "folded_conv is made by folding (variant kind folded), not written in a spec");
  return *op.fold;
}

OpShape infer_folded_conv(const Graph& graph, Op& op) {
  const FoldProgram& p = program_of(op);
  const ConvAttrs& a = op.conv;
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  const int dims = in.spatial_rank();
  require(p.spatial_dims == dims, op.name,
          "the fold program is " + std::to_string(p.spatial_dims) + "-D, the input is not");
  require(p.out().in_channels == in.channels(), op.name,
          "the fold program reads " + std::to_string(p.out().in_channels) + " channels, the input has " +
              std::to_string(in.channels()));
  require(p.out().out_channels == a.out_channels && p.groups == a.groups, op.name,
          "the fold program and the conv's geometry disagree");
  // The program writes the kernel, and reads its operands, in logical order: whatever layout the
  // source conv's weight had, this conv computes with a channels_first kernel.
  op.conv.weight_layout = fold_kernel_desc(p, in.dtype).layout;
  OpShape s;
  s.output = in;
  s.output.shape[1] = a.out_channels;
  for (size_t d = 0; d < static_cast<size_t>(dims); ++d) {
    s.output.shape[d + 2] = window_output_size(in.shape[d + 2], a.kernel[d], a.stride[d], a.padding[d], a.dilation[d]);
    require(s.output.shape[d + 2] > 0, op.name, "the folded kernel is larger than the padded input");
  }
  for (size_t k = 0; k < p.operands.size(); ++k)
    s.params.push_back(
        {"operand" + std::to_string(static_cast<int64_t>(k)), p.operands[k].shape, 1, ParamInit::derived});
  return s;
}

// The folded conv's kernel and bias, composed from its parameters by its fold program (what every
// backend computes at each step), written as the plain conv they make.
void folded_conv_onnx(OnnxNodeWriter& w, const Op& op) {
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
  onnx_export::conv_nodes(w, op, plain.conv, weights, false);
}

}  // namespace

OpDefinition define_folded_conv() {
  OpDefinition d;
  d.kind = OpKind::folded_conv;
  d.spec_op = false;
  d.infer = infer_folded_conv;
  d.saved = {{0}, false, {}};
  d.aux = [](const Graph& graph, const Op& op) {
    const FoldProgram& p = program_of(op);
    const DType dtype = graph.desc(op.inputs.at(0)).dtype;
    return std::vector<TensorDesc>{fold_kernel_desc(p, dtype)};
  };
  d.aux_names = {"folded kernel"};
  d.work = [](const WorkQuery& q) {
    const FoldProgram& p = program_of(q.op);
    const TensorDesc& in = q.graph.desc(q.op.inputs.at(0));
    const TensorDesc& out = q.graph.desc(q.op.output);
    const int64_t conv =
        checked_mul(checked_mul(checked_mul(checked_mul(in.batch(), out.channels()), in.channels() / q.op.conv.groups),
                                count_product(q.op.conv.kernel)),
                    out.spatial_size());
    const int64_t kernel = p.macs();
    OpWork w;
    w.macs = {checked_add(conv, kernel), q.input_requires_grad.at(0) ? conv : 0,
              checked_add(conv, checked_mul(kernel, 3))};
    if (q.op.conv.bias) w.elementwise = {q.output_elements(), 0, q.output_elements()};
    return w;
  };
  d.attributes = [](const Op& op) {
    const ConvAttrs& a = op.conv;
    const FoldProgram& p = program_of(op);
    nlohmann::ordered_json operands = nlohmann::ordered_json::array();
    for (const FoldOperand& o : p.operands) operands.push_back(o.name);
    return nlohmann::ordered_json{
        {"out_channels", a.out_channels}, {"kernel", a.kernel},     {"stride", a.stride}, {"padding", a.padding},
        {"dilation", a.dilation},         {"groups", a.groups},     {"bias", a.bias},     {"folds", operands},
        {"fold_steps", p.steps.size()},   {"kernel_macs", p.macs()}};
  };
  d.traits = OpTraits{};
  d.onnx_export = folded_conv_onnx;
  return d;
}

}  // namespace convbench

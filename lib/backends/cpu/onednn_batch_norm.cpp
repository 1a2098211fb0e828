// Batch-norm forward through oneDNN's batch_normalization primitive for channels_last tensors,
// on the executor's layout directly (its nhwc jit kernel is fast). Everything else runs in
// batch_norm_cpu.cpp: oneDNN's plain-nchw kernel is slow, and its backward accumulates the
// parameter gradients in float, which lost 1% of grad-beta to cancellation in a bottleneck
// block where PyTorch (double accumulation) and our loops agree with float64 to 1e-6.
// oneDNN speaks mean and (biased) variance; the IR keeps mean and invstd = 1/sqrt(var + eps)
// (aux[0], aux[1]) and PyTorch's running statistics with the unbiased variance, so we convert
// after the primitive.
#include <string>

#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/onednn_ops.hpp"

namespace convbench::cpu {
namespace {

using dnnl::memory;

enum Source { kX, kGamma, kBeta, kY, kMean, kVar };

std::string batch_norm_key(const Graph& graph, const Op& op, bool training) {
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  return std::string("batch_norm|f") + (training ? "t|" : "i|") + in.shape_string() +
         (in.layout == Layout::channels_last ? "L|" : "F|") + std::to_string(op.norm.eps);
}

}  // namespace

bool batch_norm_on_onednn(const TensorDesc& in, Phase phase) {
  // A bfloat16 input (mixed precision) runs in batch_norm_cpu.cpp's loops, which take it as is.
  const bool float32 = in.dtype == DType::float32 || in.dtype == DType::tf32;
  return phase == Phase::forward && in.layout == Layout::channels_last && float32;
}

const Plan& OneDnnOps::batch_norm_plan(const Graph& graph, const Op& op, bool training) {
  const std::string key = batch_norm_key(graph, op, training);
  auto it = plans_.find(key);
  if (it == plans_.end()) it = plans_.emplace(key, build_batch_norm_plan(graph, op, training)).first;
  return it->second;
}

Plan OneDnnOps::build_batch_norm_plan(const Graph& graph, const Op& op, bool training) {
  const TensorDesc& in = graph.desc(op.inputs.at(0));
  // float32 only: batch_norm_on_onednn() sends a bfloat16 input to the own loops.
  const memory::desc data = activation_md(in, memory::data_type::f32);
  const memory::desc channel = vector_md(in.channels());
  using flags = dnnl::normalization_flags;
  // oneDNN 2.6 takes scale and shift as two vectors (use_scale | use_shift).
  const flags affine = flags::use_scale | flags::use_shift;
  const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  const flags f = training ? affine : affine | flags::use_global_stats;
  const dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(prop, data, static_cast<float>(op.norm.eps), f), attr_, engine_);
  Plan plan;
  // In training, mean and variance are outputs; in inference, the running statistics are inputs.
  add_step(plan, pd,
           {operand(DNNL_ARG_SRC, kX, false, data), operand(DNNL_ARG_SCALE, kGamma, false, channel),
            operand(DNNL_ARG_SHIFT, kBeta, false, channel), operand(DNNL_ARG_DST, kY, true, data),
            operand(DNNL_ARG_MEAN, kMean, training, channel), operand(DNNL_ARG_VARIANCE, kVar, training, channel)});
  place(plan);
  return plan;
}

void OneDnnOps::batch_norm_forward(const ForwardCall& call) {
  const Plan& plan = batch_norm_plan(call.graph, call.op, call.training);
  std::vector<void*> tensors(6, nullptr);
  tensors[kX] = call.inputs.at(0)->raw();
  tensors[kGamma] = call.params.at(0)->raw();
  tensors[kBeta] = call.params.at(1)->raw();
  tensors[kY] = call.output->raw();
  if (!call.training) {
    tensors[kMean] = call.buffers.at(0)->raw();
    tensors[kVar] = call.buffers.at(1)->raw();
    run(plan, tensors, call.workspace);
    return;
  }
  variance_.resize(static_cast<size_t>(call.inputs[0]->desc.channels()));
  tensors[kMean] = call.aux.at(0)->raw();
  tensors[kVar] = variance_.data();
  run(plan, tensors, call.workspace);
  finish_batch_norm_statistics(call, std::vector<double>(variance_.begin(), variance_.end()));
}

}  // namespace convbench::cpu

// The activations oneDNN's eltwise primitive has, forward and backward, vectorised with its own
// exp, erf and tanh (a loop of std::exp stays scalar: glibc's vector exp needs -ffast-math). An
// activation treats its tensor as one flat vector, so every layout is the same call. oneDNN's
// backward reads the tensor the op's definition saves: the input (swish, hardswish, gelu, clip_v2)
// or the output (logistic_use_dst_for_bwd, for sigmoid). eltwise primitives need no scratchpad; a
// oneDNN that asked for one would fail the call loudly (run()) rather than hide the bytes.
#include <stdexcept>
#include <string>

#include "backends/cpu/onednn_ops.hpp"

namespace convbench::cpu {
namespace {

std::string eltwise_key(const EltwiseForm& form, Phase phase, int64_t elements) {
  return "eltwise|" + std::to_string(static_cast<int>(form.algorithm)) + (phase == Phase::forward ? "|f|" : "|b|") +
         std::to_string(form.alpha) + "|" + std::to_string(form.beta) + "|" + std::to_string(elements);
}

enum EltwiseSource { kEltwiseSaved, kEltwiseGradOutput, kEltwiseGradInput };

}  // namespace

const Plan& OneDnnOps::eltwise_plan(const EltwiseForm& form, Phase phase, int64_t elements) {
  const std::string key = eltwise_key(form, phase, elements);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  const dnnl::memory::desc flat = vector_md(elements);
  const dnnl::eltwise_forward::primitive_desc forward(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, form.algorithm, flat, form.alpha, form.beta),
      attr_, engine_);
  Plan plan;
  if (phase == Phase::forward) {
    add_step(plan, forward, {operand(DNNL_ARG_SRC, 0, false, flat), operand(DNNL_ARG_DST, 1, true, flat)});
  } else {
    const dnnl::eltwise_backward::primitive_desc backward(
        dnnl::eltwise_backward::desc(form.algorithm, flat, flat, form.alpha, form.beta), attr_, engine_, forward);
    const int saved_arg = form.backward_reads_output ? DNNL_ARG_DST : DNNL_ARG_SRC;
    add_step(
        plan, backward,
        {operand(saved_arg, kEltwiseSaved, false, flat), operand(DNNL_ARG_DIFF_DST, kEltwiseGradOutput, false, flat),
         operand(DNNL_ARG_DIFF_SRC, kEltwiseGradInput, true, flat)});
  }
  place(plan);
  return plans_.emplace(key, std::move(plan)).first->second;
}

void OneDnnOps::eltwise_forward(const EltwiseForm& form, const Tensor& x, Tensor& y) {
  if (x.desc.numel() != y.desc.numel())
    throw std::invalid_argument("cpu backend: an activation's input and output differ in size");
  const Plan& plan = eltwise_plan(form, Phase::forward, x.desc.numel());
  run(plan, {x.raw(), y.raw()}, nullptr);
}

void OneDnnOps::eltwise_backward(const EltwiseForm& form, const Tensor& saved, const Tensor& dy, Tensor& dx) {
  if (saved.desc.numel() != dy.desc.numel() || dy.desc.numel() != dx.desc.numel())
    throw std::invalid_argument("cpu backend: an activation's gradients differ in size from what it saved");
  const Plan& plan = eltwise_plan(form, Phase::backward, dy.desc.numel());
  run(plan, {saved.raw(), dy.raw(), dx.raw()}, nullptr);
}

}  // namespace convbench::cpu

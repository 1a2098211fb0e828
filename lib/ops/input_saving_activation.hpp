// What the activations that PyTorch differentiates from their input (silu, hardswish, hardsigmoid,
// relu6, gelu) share: the output has the input's shape, backward reads the saved input
// (checked with torch.autograd.graph.saved_tensors_hooks: SiluBackward0, HardswishBackward0,
// HardsigmoidBackward0, HardtanhBackward0 for ReLU6, GeluBackward0 each keep `self`), they run in
// their input's dtype under autocast, and none runs in place: PyTorch's in-place forms keep a copy
// of the input they overwrite, so inplace_act would save nothing (explain names them).
#pragma once

#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

// `forward_flops` and `backward_flops`: per element, as the op's file counts them.
inline OpDefinition input_saving_activation(OpKind kind, int64_t forward_flops, int64_t backward_flops) {
  OpDefinition d;
  d.kind = kind;
  d.saved = {{0}, false, {}};
  d.work = [forward_flops, backward_flops](const WorkQuery& q) {
    const int64_t n = q.output_elements();
    OpWork w;
    w.elementwise = {checked_mul(n, forward_flops), q.any_input_grad() ? checked_mul(n, backward_flops) : 0, 0};
    return w;
  };
  d.infer = infer_same_shape;
  d.autocast = autocast_always(AutocastClass::follows);
  d.traits = OpTraits{.activation = true, .in_place_safe = {}, .conv_epilogue = std::nullopt};
  return d;
}

}  // namespace convbench

// convert_layout: the reference backend loads and stores tensors in logical order, whatever
// their layout, so converting is a load from one order and a store into the other, both ways.
#include "backends/reference/reference_kernels.hpp"

namespace convbench::reference {
namespace {

void convert_layout_forward(const ForwardCall& call) {
  store(required(call.output, "convert_layout", "output"),
        load(required(optional_at(call.inputs, 0), "convert_layout", "input")));
}

void convert_layout_backward(const BackwardCall& call) {
  Tensor* grad_x = optional_at(call.grad_inputs, 0);
  if (grad_x == nullptr) return;
  store(*grad_x, load(required(call.grad_output, "convert_layout", "grad_output")));
}

}  // namespace

void register_layout_kernels(KernelTable& table) {
  table.add(OpKind::convert_layout, {convert_layout_forward, convert_layout_backward});
}

}  // namespace convbench::reference

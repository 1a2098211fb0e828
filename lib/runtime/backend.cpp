#include "runtime/backend.hpp"

#include <stdexcept>

namespace convbench {

namespace {

std::logic_error no_loss_scaling(const std::string& backend) {
  return std::logic_error(backend + " backend has no loss scaling: precision amp_float16 runs on --device reference");
}

const OpKernels& registered(const Backend& backend, const Op& op) {
  if (const OpKernels* k = backend.kernels().find(op.kind)) return *k;
  throw UnsupportedOp(op.name + ": the " + backend.name() + " backend has no kernels for " +
                      std::string(to_string(op.kind)));
}

}  // namespace

std::optional<std::string> Backend::unsupported(const Graph& graph, const Op& op) const {
  if (!kernels().find(op.kind))
    return "the " + name() + " backend has no kernels for " + std::string(to_string(op.kind));
  return limitation(graph, op);
}

void Backend::forward(const ForwardCall& call) { registered(*this, call.op).forward(call); }

void Backend::backward(const BackwardCall& call) { registered(*this, call.op).backward(call); }

void Backend::scale(Tensor&, const Tensor&, double) { throw no_loss_scaling(name()); }

bool Backend::unscale(const std::vector<Tensor*>&, double, Tensor&) { throw no_loss_scaling(name()); }

}  // namespace convbench

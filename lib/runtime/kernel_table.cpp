#include "runtime/kernel_table.hpp"

#include <stdexcept>

namespace convbench {

void KernelTable::add(OpKind kind, OpKernels kernels) {
  if (!kernels.forward || !kernels.backward)
    throw std::logic_error("kernel table: " + std::string(to_string(kind)) + " registered without both directions");
  if (!kernels_.emplace(kind, std::move(kernels)).second)
    throw std::logic_error("kernel table: " + std::string(to_string(kind)) + " registered twice");
}

const OpKernels* KernelTable::find(OpKind kind) const {
  const auto it = kernels_.find(kind);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<OpKind> KernelTable::kinds() const {
  std::vector<OpKind> out;
  for (const auto& [kind, kernels] : kernels_) out.push_back(kind);
  return out;
}

void KernelTable::replace(OpKind kind, OpKernels kernels) {
  const auto it = kernels_.find(kind);
  if (it == kernels_.end())
    throw std::logic_error("kernel table: " + std::string(to_string(kind)) + " replaced before it was registered");
  if (!kernels.forward || !kernels.backward)
    throw std::logic_error("kernel table: " + std::string(to_string(kind)) + " replaced without both directions");
  it->second = std::move(kernels);
}

}  // namespace convbench

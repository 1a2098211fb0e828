#include "graph/fold_program.hpp"

namespace convbench {

int64_t FoldOperand::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> FoldProgram::weight_shape() const {
  std::vector<int64_t> shape = {out().out_channels, out().in_channels / groups};
  for (int d = 3 - spatial_dims; d < 3; ++d) shape.push_back(kernel[static_cast<size_t>(d)]);
  return shape;
}

int64_t FoldProgram::macs() const {
  int64_t total = 0;
  for (const FoldStep& s : steps) {
    if (s.kind != FoldStepKind::compose_conv || s.src < 0) continue;  // from the identity: a copy
    const FoldRegister& dst = registers.at(static_cast<size_t>(s.dst));
    const FoldRegister& src = registers.at(static_cast<size_t>(s.src));
    const int64_t per_group = s.channels / s.groups;
    const int64_t k = s.kernel[0] * s.kernel[1] * s.kernel[2];
    total += dst.out_channels * per_group * k * src.in_channels * src.tap_count();
    if (src.bias) total += dst.out_channels * per_group * k;
  }
  return total;
}

int64_t FoldProgram::register_elements() const {
  int64_t total = 0;
  for (const FoldRegister& r : registers) total += r.kernel_numel() + (r.bias ? r.out_channels : 0);
  return total;
}

}  // namespace convbench

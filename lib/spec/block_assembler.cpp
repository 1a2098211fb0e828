#include "spec/block_assembler.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/op_registry.hpp"

namespace convbench {
namespace {

std::vector<int64_t> repeat(int64_t v, int dims) { return std::vector<int64_t>(static_cast<size_t>(dims), v); }

}  // namespace

bool has_unit_stride(const BlockSpec& block) {
  return std::all_of(block.stride.begin(), block.stride.end(), [](int64_t s) { return s == 1; });
}

int BlockAssembler::cna(const std::string& unit, int x, int64_t out, bool spatial, std::vector<int64_t> stride,
                        int64_t groups) {
  return norm_act(unit, conv(unit, x, out, spatial, std::move(stride), groups));
}

int BlockAssembler::conv(const std::string& unit, int x, int64_t out, bool spatial, std::vector<int64_t> stride,
                         int64_t groups) {
  ConvAttrs a;
  a.out_channels = out;
  a.kernel = spatial ? block_.kernel : repeat(1, block_.dims);
  a.padding = spatial ? block_.padding : repeat(0, block_.dims);
  a.dilation = spatial ? block_.dilation : repeat(1, block_.dims);
  a.stride = std::move(stride);
  a.groups = groups;
  a.bias = block_.bias;
  return b_.conv(prefix_ + unit + "conv", x, a);
}

int BlockAssembler::norm_act(const std::string& unit, int y) { return act(unit, norm(unit, y)); }

// A block's act is the op of the same name (spec.cpp's table spells them so): a new activation
// is its op and a row of that table, nothing here.
int BlockAssembler::act(const std::string& unit, int y) {
  if (block_.act == ActKind::none) return y;
  if (block_.act == ActKind::leaky_relu) return b_.leaky_relu(prefix_ + unit + "act", y, block_.negative_slope);
  const OpDefinition* op = find_op_definition(to_string(block_.act));
  if (!op) throw std::logic_error("act \"" + std::string(to_string(block_.act)) + "\" names no op");
  return b_.activation(op->kind, prefix_ + unit + "act", y);
}

int BlockAssembler::norm(const std::string& unit, int y) {
  switch (block_.norm) {
    case NormKind::batch: return b_.batch_norm(prefix_ + unit + "norm", y);
    case NormKind::group: return b_.group_norm(prefix_ + unit + "norm", y, block_.norm_groups);
    case NormKind::none: return y;
  }
  return y;
}

int BlockAssembler::dropout(int y) {
  if (block_.dropout <= 0.0) return y;
  if (dropout_kind_ == DropoutKind::channel) return b_.channel_dropout(prefix_ + "dropout", y, block_.dropout);
  return b_.dropout(prefix_ + "dropout", y, block_.dropout);
}

int BlockAssembler::finish_main_path(int x, int main) {
  main = dropout(main);
  if (!block_.residual) return main;
  int shortcut = x;
  if (block_.in_channels != block_.out_channels || !has_unit_stride(block_)) {
    ConvAttrs a;
    a.out_channels = block_.out_channels;
    a.kernel = repeat(1, block_.dims);
    a.stride = block_.stride;
    a.padding = repeat(0, block_.dims);
    a.dilation = repeat(1, block_.dims);
    a.bias = block_.bias;
    shortcut = norm("shortcut.", b_.conv(prefix_ + "shortcut.conv", x, a));
  }
  return b_.add(prefix_ + "add", main, shortcut);
}

}  // namespace convbench

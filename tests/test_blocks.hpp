// Block specs built in code for tests (no spec file needed).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "spec/block_kind.hpp"
#include "spec/kind_bottleneck.hpp"
#include "spec/spec.hpp"

namespace convbench::testing {

inline VariantSpec variant(const std::string& kind, const std::string& name = "") {
  VariantSpec v;
  v.kind = kind;
  v.name = name.empty() ? kind : name;
  v.key_path = "blocks[0].variants[?]";
  return v;
}

// The seed 000 block: 3D, batch 6, 16 -> 32 channels, 32^3, bias, BN + ReLU.
inline BlockSpec seed_block() {
  BlockSpec b;
  b.name = "seed";
  b.dims = 3;
  b.batch = 6;
  b.in_channels = 16;
  b.out_channels = 32;
  b.size = {32, 32, 32};
  b.kernel = {3, 3, 3};
  b.stride = {1, 1, 1};
  b.padding = {1, 1, 1};
  b.dilation = {1, 1, 1};
  VariantSpec bottleneck = variant("bottleneck");
  bottleneck.kind_parameters = BottleneckParameters{.ratio = 2};
  b.variants = {variant("standard"), bottleneck, variant("separable")};
  b.baseline = "standard";
  b.key_path = "blocks[0]";
  return b;
}

// A small 2D block for quick runs; `dims` 2 or 3.
inline BlockSpec small_block(int dims, int64_t in, int64_t out, int64_t size) {
  BlockSpec b;
  b.name = "small";
  b.dims = dims;
  b.batch = 2;
  b.in_channels = in;
  b.out_channels = out;
  b.size.assign(static_cast<size_t>(dims), size);
  b.kernel.assign(static_cast<size_t>(dims), 3);
  b.stride.assign(static_cast<size_t>(dims), 1);
  b.padding.assign(static_cast<size_t>(dims), 1);
  b.dilation.assign(static_cast<size_t>(dims), 1);
  b.variants = {variant("standard")};
  b.baseline = "standard";
  b.key_path = "blocks[0]";
  return b;
}

// "name(input, ...)" per op, in execution order: a graph's wiring, compared as text.
inline std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> out;
  for (const Op& op : g.ops) {
    std::string s = op.name + "(";
    for (size_t i = 0; i < op.inputs.size(); ++i)
      s += (i ? ", " : "") + g.values.at(static_cast<size_t>(op.inputs[i])).name;
    out.push_back(s + ")");
  }
  return out;
}

}  // namespace convbench::testing

#include "variants/variant_builder.hpp"

#include "ops/op_registry.hpp"

#include <map>

#include "ops/graph_builder.hpp"

namespace convbench {
namespace {

std::vector<int64_t> repeat(int64_t v, int dims) { return std::vector<int64_t>(static_cast<size_t>(dims), v); }

// conv -> norm -> act with names "<prefix>conv", "<prefix>norm", "<prefix>act".
class BlockAssembler {
 public:
  BlockAssembler(GraphBuilder& b, const BlockSpec& block) : b_(b), block_(block) {}

  // A "spatial" conv uses the block's kernel, padding and dilation; the others are 1x1 convs
  // (no padding, no dilation). Stride is given explicitly.
  int cna(const std::string& prefix, int x, int64_t out, bool spatial, std::vector<int64_t> stride, int64_t groups) {
    ConvAttrs a;
    a.out_channels = out;
    a.kernel = spatial ? block_.kernel : repeat(1, block_.dims);
    a.padding = spatial ? block_.padding : repeat(0, block_.dims);
    a.dilation = spatial ? block_.dilation : repeat(1, block_.dims);
    a.stride = std::move(stride);
    a.groups = groups;
    a.bias = block_.bias;
    return norm_act(prefix, b_.conv(prefix + "conv", x, a));
  }

  int norm_act(const std::string& prefix, int y) {
    y = norm(prefix, y);
    switch (block_.act) {
      case ActKind::relu: return b_.relu(prefix + "act", y);
      case ActKind::leaky_relu: return b_.leaky_relu(prefix + "act", y, block_.negative_slope);
      case ActKind::none: return y;
    }
    return y;
  }

  int norm(const std::string& prefix, int y) {
    switch (block_.norm) {
      case NormKind::batch: return b_.batch_norm(prefix + "norm", y);
      case NormKind::group: return b_.group_norm(prefix + "norm", y, block_.norm_groups);
      case NormKind::none: return y;
    }
    return y;
  }

  // Dropout ends the main path; a residual shortcut is added to it.
  int finish_main_path(int x, int main) {
    if (block_.dropout > 0.0) main = b_.dropout("dropout", main, block_.dropout);
    if (!block_.residual) return main;
    bool unit_stride = true;
    for (int64_t s : block_.stride) unit_stride = unit_stride && s == 1;
    int shortcut = x;
    if (block_.in_channels != block_.out_channels || !unit_stride) {
      ConvAttrs a;
      a.out_channels = block_.out_channels;
      a.kernel = repeat(1, block_.dims);
      a.stride = block_.stride;
      a.padding = repeat(0, block_.dims);
      a.dilation = repeat(1, block_.dims);
      a.bias = block_.bias;
      shortcut = norm("shortcut.", b_.conv("shortcut.conv", x, a));
    }
    return b_.add("add", main, shortcut);
  }

 private:
  GraphBuilder& b_;
  const BlockSpec& block_;
};

// A custom variant's ops, each added from its fields (its definition applies their defaults),
// reading the block input `x`; returns the value that is the variant's output.
int build_custom(GraphBuilder& b, const BlockSpec& block, const VariantSpec& v, int x) {
  std::map<std::string, int> values{{"input", x}};
  for (const CustomOpSpec& s : v.ops) {
    try {
      if (converts_at_boundary(block) && (s.name == kToBlockLayoutOp || s.name == kFromBlockLayoutOp))
        throw GraphError(s.name +
                         ": the name of a layout conversion this block adds at its boundary "
                         "(layout_conversion: boundary); name the op otherwise");
      std::vector<int> in;
      for (const std::string& name : s.inputs) {
        auto it = values.find(name);
        if (it == values.end()) throw GraphError("input \"" + name + "\" is not defined before this op");
        in.push_back(it->second);
      }
      const OpDefinition* def = find_op_definition(s.op);
      if (!def) throw GraphError(s.name + ": unknown op kind \"" + s.op + "\"");
      values[s.name] = b.add_from_fields(def->kind, s.name, std::move(in), s.fields, block.kernel, block.bias);
    } catch (const GraphError& e) {
      throw InputError(s.where, s.key_path, e.what());
    }
  }
  const std::string out = v.output.empty() ? v.ops.back().name : v.output;
  auto it = values.find(out);
  if (it == values.end()) throw InputError(v.where, v.key_path + ".output", "no op is named \"" + out + "\"");
  return it->second;
}

}  // namespace

Graph build_variant_graph(const BlockSpec& block, const VariantSpec& v) {
  try {
    GraphBuilder b(block.name + "/" + v.name, block_input(block));
    // With layout_conversion: boundary, the block's own ops run in its layout between two
    // conversions from and back to the network's channels-first layout.
    const bool convert = converts_at_boundary(block);
    const int x = convert ? b.convert_layout(kToBlockLayoutOp, b.input()) : b.input();
    const auto finish = [&](int y) { return b.finish(convert ? b.convert_layout(kFromBlockLayoutOp, y) : y); };
    if (v.kind == "custom") return finish(build_custom(b, block, v, x));
    BlockAssembler a(b, block);
    const std::vector<int64_t> one = repeat(1, block.dims);
    int y = -1;
    if (v.kind == "standard") {
      y = a.cna("", x, block.out_channels, true, block.stride, 1);
    } else if (v.kind == "grouped") {
      y = a.cna("", x, block.out_channels, true, block.stride, v.groups);
    } else if (v.kind == "bottleneck") {
      const int64_t mid = block.out_channels / v.ratio;
      y = a.cna("reduce.", x, mid, false, one, 1);
      y = a.cna("spatial.", y, mid, true, block.stride, v.groups);
      y = a.cna("expand.", y, block.out_channels, false, one, 1);
    } else if (v.kind == "separable") {
      const int64_t wide = block.in_channels * v.multiplier;
      y = a.cna("depthwise.", x, wide, true, block.stride, block.in_channels);
      y = a.cna("pointwise.", y, block.out_channels, false, one, 1);
    } else {
      throw GraphError("unknown variant kind \"" + v.kind + "\"");
    }
    return finish(a.finish_main_path(x, y));
  } catch (const GraphError& e) {
    throw InputError(v.where, v.key_path, e.what());
  }
}

const std::vector<VariantKindInfo>& variant_kinds() {
  static const std::vector<VariantKindInfo> kinds = [] {
    std::string ops;  // every op kind a custom variant may use, from the registry
    for (const OpDefinition* d : op_definitions()) ops += (ops.empty() ? "" : ", ") + std::string(d->name);
    return std::vector<VariantKindInfo>{
        {"standard", "(none)", "CNA(k, stride): conv k -> norm -> act"},
        {"bottleneck", "ratio (4), groups (1)",
         "CNA(1x1, in->mid=out/ratio) -> CNA(k, mid->mid, stride, groups) -> CNA(1x1, mid->out)"},
        {"separable", "multiplier (1)", "CNA(k, in->in*multiplier, groups=in, stride) -> CNA(1x1, ->out)"},
        {"grouped", "groups (required)", "CNA(k, stride, groups)"},
        {"custom", "ops (required), output (last op)", "your ops: " + ops},
    };
  }();
  return kinds;
}

}  // namespace convbench

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

// Resolves a custom op's optional per-dim field against a default.
std::vector<int64_t> or_default(const std::optional<std::vector<int64_t>>& v, std::vector<int64_t> def) {
  return v ? *v : std::move(def);
}

int build_custom_op(GraphBuilder& b, const BlockSpec& block, const CustomOpSpec& s, const std::vector<int>& in) {
  const int dims = block.dims;
  auto conv_attrs = [&]() {
    ConvAttrs a;
    const int64_t in_channels = b.desc(in[0]).channels();
    a.out_channels = s.out_channels.value_or(in_channels);
    a.kernel = or_default(s.kernel, block.kernel);
    a.stride = or_default(s.stride, repeat(1, dims));
    a.dilation = or_default(s.dilation, repeat(1, dims));
    if (s.padding) {
      a.padding = *s.padding;
    } else {
      a.padding.resize(a.kernel.size());
      for (size_t d = 0; d < a.kernel.size() && d < a.dilation.size(); ++d)
        a.padding[d] = a.dilation[d] * (a.kernel[d] - 1) / 2;
    }
    a.output_padding = or_default(s.output_padding, {});
    a.groups = s.groups == -1 ? in_channels : s.groups;  // -1: "depthwise"
    a.bias = s.bias.value_or(block.bias);
    return a;
  };
  auto pool_attrs = [&]() {
    PoolAttrs p;
    p.kernel = or_default(s.kernel, repeat(2, dims));
    p.stride = or_default(s.stride, p.kernel);
    p.padding = or_default(s.padding, repeat(0, dims));
    return p;
  };
  const OpDefinition* def = find_op_definition(s.op);
  if (!def) throw GraphError(s.name + ": unknown op kind \"" + s.op + "\"");
  switch (def->kind) {  // every kind: -Wswitch names the one a new op forgot
    case OpKind::conv: return b.conv(s.name, in[0], conv_attrs());
    case OpKind::conv_transpose: return b.conv_transpose(s.name, in[0], conv_attrs());
    case OpKind::batch_norm: return b.batch_norm(s.name, in[0]);
    case OpKind::group_norm: return b.group_norm(s.name, in[0], s.norm_groups);
    case OpKind::relu: return b.relu(s.name, in[0]);
    case OpKind::leaky_relu: return b.leaky_relu(s.name, in[0], s.negative_slope);
    case OpKind::dropout: return b.dropout(s.name, in[0], s.p);
    case OpKind::add: return b.add(s.name, in.at(0), in.at(1));
    case OpKind::sub: return b.sub(s.name, in.at(0), in.at(1));
    case OpKind::concat: return b.concat(s.name, in);
    case OpKind::max_pool: return b.max_pool(s.name, in[0], pool_attrs());
    case OpKind::avg_pool: return b.avg_pool(s.name, in[0], pool_attrs());
    case OpKind::upsample: return b.upsample(s.name, in[0], s.scale);
  }
  throw GraphError(s.name + ": unknown op kind \"" + s.op + "\"");
}

Graph build_custom(GraphBuilder& b, const BlockSpec& block, const VariantSpec& v) {
  std::map<std::string, int> values{{"input", b.input()}};
  for (const CustomOpSpec& s : v.ops) {
    try {
      std::vector<int> in;
      for (const std::string& name : s.inputs) {
        auto it = values.find(name);
        if (it == values.end()) throw GraphError("input \"" + name + "\" is not defined before this op");
        in.push_back(it->second);
      }
      if (in.empty()) throw GraphError("an op needs at least one input");
      values[s.name] = build_custom_op(b, block, s, in);
    } catch (const GraphError& e) {
      throw InputError(s.where, s.key_path, e.what());
    }
  }
  const std::string out = v.output.empty() ? v.ops.back().name : v.output;
  auto it = values.find(out);
  if (it == values.end()) throw InputError(v.where, v.key_path + ".output", "no op is named \"" + out + "\"");
  try {
    return b.finish(it->second);
  } catch (const GraphError& e) {
    throw InputError(v.where, v.key_path, e.what());
  }
}

}  // namespace

Graph build_variant_graph(const BlockSpec& block, const VariantSpec& v) {
  TensorDesc input;
  input.shape = {block.batch, block.in_channels};
  input.shape.insert(input.shape.end(), block.size.begin(), block.size.end());
  input.dtype = block.dtype;
  input.layout = block.layout;
  try {
    GraphBuilder b(block.name + "/" + v.name, input);
    if (v.kind == "custom") return build_custom(b, block, v);
    BlockAssembler a(b, block);
    const int x = b.input();
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
    return b.finish(a.finish_main_path(x, y));
  } catch (const GraphError& e) {
    throw InputError(v.where, v.key_path, e.what());
  }
}

const std::vector<VariantKindInfo>& variant_kinds() {
  static const std::vector<VariantKindInfo> kinds = {
      {"standard", "(none)", "CNA(k, stride): conv k -> norm -> act"},
      {"bottleneck", "ratio (4), groups (1)",
       "CNA(1x1, in->mid=out/ratio) -> CNA(k, mid->mid, stride, groups) -> CNA(1x1, mid->out)"},
      {"separable", "multiplier (1)", "CNA(k, in->in*multiplier, groups=in, stride) -> CNA(1x1, ->out)"},
      {"grouped", "groups (required)", "CNA(k, stride, groups)"},
      {"custom", "ops (required), output (last op)",
       "your ops: conv, conv_transpose, batch_norm, group_norm, relu, leaky_relu, dropout, add, "
       "sub, concat, max_pool, avg_pool, upsample"},
  };
  return kinds;
}

}  // namespace convbench

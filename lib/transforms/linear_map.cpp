#include "transforms/linear_map.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "graph/shape_rules.hpp"
#include "ops/op_registry.hpp"

namespace convbench {
namespace {

// A per-dim attribute padded to three dims (2-D gets a leading `fill`).
FoldExtent pad3(const std::vector<int64_t>& v, int64_t fill) {
  FoldExtent e{fill, fill, fill};
  const size_t offset = 3 - v.size();
  for (size_t d = 0; d < v.size(); ++d) e[offset + d] = v[d];
  return e;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Why an op that is not folded stays (configs/README.md "Folded convolutions" lists these).
std::string not_folded_reason(const Op& op) {
  const std::string who = std::string(to_string(op.kind)) + " " + quoted(op.name);
  if (op_traits(op.kind).activation) return who + " is not linear";
  switch (op.kind) {
    case OpKind::max_pool: return who + " is not linear";
    case OpKind::group_norm: return who + " normalises by each sample's statistics: not a fixed linear map";
    case OpKind::mul: return who + " multiplies two values: not linear in the input";
    case OpKind::conv_transpose:
      return who + " is linear, but a transposed conv is not folded (its composition is not one conv)";
    default: return who + " is not folded (folding takes conv, batch_norm in inference, add, sub, concat, slice)";
  }
}

}  // namespace

bool LinearMap::any_constant() const { return std::find(constant.begin(), constant.end(), 1) != constant.end(); }

LinearMapBuilder::LinearMapBuilder(const Graph& graph) : graph_(graph), dims_(graph.desc(graph.input).spatial_rank()) {}

FoldExtent LinearMapBuilder::extent(int value) const {
  const TensorDesc& d = graph_.desc(value);
  return pad3(std::vector<int64_t>(d.shape.begin() + 2, d.shape.end()), 1);
}

int LinearMapBuilder::identity(int v) {
  LinearMap m;
  m.root = v;
  m.out_channels = m.in_channels = graph_.desc(v).channels();
  for (auto& used : m.tap_used) used = {1};
  m.pairs.assign(static_cast<size_t>(m.out_channels * m.in_channels), 0);
  for (int64_t c = 0; c < m.out_channels; ++c) m.pairs[static_cast<size_t>(c * m.in_channels + c)] = 1;
  m.constant.assign(static_cast<size_t>(m.out_channels), 0);
  m.identity_rows = 0;
  maps_.push_back(std::move(m));
  return static_cast<int>(maps_.size()) - 1;
}

int LinearMapBuilder::new_register(LinearMap map, bool bias) {
  FoldRegister r;
  r.out_channels = map.out_channels;
  r.in_channels = map.in_channels;
  r.taps = map.taps;
  r.bias = bias;
  program_.registers.push_back(r);
  map.reg = static_cast<int>(program_.registers.size()) - 1;
  maps_.push_back(std::move(map));
  return static_cast<int>(maps_.size()) - 1;
}

int LinearMapBuilder::operand(bool buffer, int index) {
  for (size_t i = 0; i < program_.operands.size(); ++i)
    if (program_.operands[i].buffer == buffer && program_.operands[i].index == index) return static_cast<int>(i);
  const Param& p = (buffer ? graph_.buffers : graph_.params).at(static_cast<size_t>(index));
  program_.operands.push_back({p.name, p.desc.shape, buffer, index});
  return static_cast<int>(program_.operands.size()) - 1;
}

int LinearMapBuilder::apply(int op_index, const std::vector<int>& input_maps, bool inference, bool batch_norm_allowed) {
  const Op& op = graph_.ops.at(static_cast<size_t>(op_index));
  const std::string who = std::string(to_string(op.kind)) + " " + quoted(op.name);
  auto first = [&]() -> const LinearMap& { return map(input_maps.at(0)); };
  int m = -1;
  switch (op.kind) {
    case OpKind::conv: m = compose_conv(op, first()); break;
    case OpKind::batch_norm:
      if (!inference)
        throw LinearMapRefusal(who + " in training normalises by the batch's statistics: not a fixed linear map " +
                               "(it folds in inference: mode: infer)");
      if (!batch_norm_allowed)
        throw LinearMapRefusal(who + ": fold: online computes the kernel inside each step and does not fold a batch " +
                               "norm (OREPA replaces a branch's batch norm by a linear scaling); fold it with " +
                               "fold: once in mode: infer");
      m = batch_norm(op, first());
      break;
    case OpKind::add: m = combine(op, input_maps, {1.0, 1.0}, false); break;
    case OpKind::sub: m = combine(op, input_maps, {1.0, -1.0}, false); break;
    case OpKind::concat: m = combine(op, input_maps, std::vector<double>(input_maps.size(), 1.0), true); break;
    case OpKind::slice: m = slice(op, first()); break;
    case OpKind::dropout:
    case OpKind::channel_dropout:
    case OpKind::drop_path: {
      if (!inference) throw LinearMapRefusal(who + " in training multiplies by a random mask: not a fixed linear map");
      LinearMap same = first();  // the identity in inference: the same map, one more op
      same.ops.push_back(op_index);
      maps_.push_back(std::move(same));
      return static_cast<int>(maps_.size()) - 1;
    }
    default: throw LinearMapRefusal(not_folded_reason(op));
  }
  LinearMap& result = maps_.at(static_cast<size_t>(m));
  result.ops.push_back(op_index);
  return m;
}

void LinearMapBuilder::check_border(const Op& op, const LinearMap& u) const {
  if (u.reg < 0) return;  // the root itself: its zero padding is the conv's own
  const ConvAttrs& a = op.conv;
  const int in = op.inputs.at(0);
  const FoldExtent k = pad3(a.kernel, 1), s = pad3(a.stride, 1), p = pad3(a.padding, 0), dl = pad3(a.dilation, 1);
  const FoldExtent size_u = extent(in), size_v = extent(op.output), size_x = extent(u.root);
  const std::string& u_name = graph_.values.at(static_cast<size_t>(in)).name;
  for (size_t d = 0; d < 3; ++d) {
    std::set<int64_t> outside;  // positions of u the conv reads in its zero padding
    for (int64_t i = 0; i < size_v[d]; ++i)
      for (int64_t q = 0; q < k[d]; ++q) {
        const int64_t j = s[d] * i + dl[d] * q - p[d];
        if (j < 0 || j >= size_u[d]) outside.insert(j);
      }
    if (outside.empty()) continue;
    if (u.any_constant())
      throw LinearMapRefusal(std::string(to_string(op.kind)) + " " + quoted(op.name) +
                             " reads the zero padding around " + quoted(u_name) +
                             ", which has a constant term (a conv bias or a batch norm's shift): " +
                             "one conv's padding would hold that constant there, not zero");
    for (int64_t j : outside)
      for (size_t t = 0; t < u.tap_used[d].size(); ++t) {
        if (!u.tap_used[d][t]) continue;
        const int64_t x = u.stride[d] * j + static_cast<int64_t>(t) - u.padding[d];
        if (x >= 0 && x < size_x[d])
          throw LinearMapRefusal(std::string(to_string(op.kind)) + " " + quoted(op.name) + " (kernel " +
                                 dims_string(a.kernel) + ", padding " + dims_string(a.padding) +
                                 ") reads the zero padding around " + quoted(u_name) + ", where " + quoted(u_name) +
                                 " as a conv of " + quoted(graph_.values.at(static_cast<size_t>(u.root)).name) +
                                 " is not zero: a padded conv after a padded conv is not one conv at the borders");
      }
  }
}

int LinearMapBuilder::compose_conv(const Op& op, const LinearMap& u) {
  const ConvAttrs& a = op.conv;
  check_border(op, u);
  const FoldExtent k = pad3(a.kernel, 1), s = pad3(a.stride, 1), p = pad3(a.padding, 0), dl = pad3(a.dilation, 1);
  LinearMap v;
  v.root = u.root;
  v.ops = u.ops;
  v.out_channels = a.out_channels;
  v.in_channels = u.in_channels;
  FoldStep step;
  step.kind = FoldStepKind::compose_conv;
  step.src = u.identity_rows >= 0 ? -1 : u.reg;  // a slice of the root: read its channels directly
  step.src_channel = u.identity_rows >= 0 ? u.identity_rows : 0;
  step.channels = u.out_channels;
  step.groups = a.groups;
  step.kernel = k;
  for (size_t d = 0; d < 3; ++d) {
    step.tap_step[d] = u.stride[d] * dl[d];
    v.stride[d] = u.stride[d] * s[d];
    v.padding[d] = u.stride[d] * p[d] + u.padding[d];
    v.taps[d] = step.tap_step[d] * (k[d] - 1) + u.taps[d];
    v.tap_used[d].assign(static_cast<size_t>(v.taps[d]), 0);
    for (int64_t q = 0; q < k[d]; ++q)
      for (size_t t = 0; t < u.tap_used[d].size(); ++t)
        if (u.tap_used[d][t]) v.tap_used[d][static_cast<size_t>(step.tap_step[d] * q) + t] = 1;
  }
  const int64_t per_group = u.out_channels / a.groups, out_per_group = a.out_channels / a.groups;
  v.pairs.assign(static_cast<size_t>(v.out_channels * v.in_channels), 0);
  v.constant.assign(static_cast<size_t>(v.out_channels), a.bias ? 1 : 0);
  for (int64_t c2 = 0; c2 < v.out_channels; ++c2) {
    const int64_t g0 = c2 / out_per_group * per_group;
    for (int64_t j = 0; j < per_group; ++j) {
      for (int64_t c0 = 0; c0 < v.in_channels; ++c0)
        if (u.pairs[static_cast<size_t>((g0 + j) * u.in_channels + c0)])
          v.pairs[static_cast<size_t>(c2 * v.in_channels + c0)] = 1;
      if (u.constant[static_cast<size_t>(g0 + j)]) v.constant[static_cast<size_t>(c2)] = 1;
    }
  }
  // A frozen conv's weight and bias are buffers of the source (a fold at build time reads them).
  const std::vector<int>& weights = a.frozen ? op.buffers : op.params;
  step.weight = operand(a.frozen, weights.at(0));
  if (a.bias) step.bias = operand(a.frozen, weights.at(1));
  const bool bias = v.any_constant();
  const int m = new_register(std::move(v), bias);
  step.dst = maps_.back().reg;
  program_.steps.push_back(step);
  return m;
}

int LinearMapBuilder::combine(const Op& op, const std::vector<int>& inputs, const std::vector<double>& signs,
                              bool stack) {
  const std::string who = std::string(to_string(op.kind)) + " " + quoted(op.name);
  const LinearMap& a = map(inputs.at(0));
  for (int i : inputs) {
    const LinearMap& b = map(i);
    if (b.root != a.root)
      throw LinearMapRefusal(who + " joins values computed from different sources (" +
                             quoted(graph_.values.at(static_cast<size_t>(a.root)).name) + " and " +
                             quoted(graph_.values.at(static_cast<size_t>(b.root)).name) +
                             "): not one conv of one input");
    if (b.stride != a.stride)
      throw LinearMapRefusal(who + " joins values of different strides from their source: not one conv");
  }
  LinearMap v;
  v.root = a.root;
  v.in_channels = a.in_channels;
  for (size_t d = 0; d < 3; ++d) {
    v.stride[d] = a.stride[d];
    for (int i : inputs) v.padding[d] = std::max(v.padding[d], map(i).padding[d]);
    v.taps[d] = 1;
    for (int i : inputs) v.taps[d] = std::max(v.taps[d], map(i).taps[d] + v.padding[d] - map(i).padding[d]);
    v.tap_used[d].assign(static_cast<size_t>(v.taps[d]), 0);
  }
  for (int i : inputs) v.out_channels = stack ? v.out_channels + map(i).out_channels : map(i).out_channels;
  v.pairs.assign(static_cast<size_t>(v.out_channels * v.in_channels), 0);
  v.constant.assign(static_cast<size_t>(v.out_channels), 0);
  std::set<int> ops;
  std::vector<FoldStep> steps;
  int64_t offset = 0;
  for (size_t n = 0; n < inputs.size(); ++n) {
    const LinearMap& b = map(inputs[n]);
    ops.insert(b.ops.begin(), b.ops.end());
    FoldStep step;
    step.kind = FoldStepKind::accumulate;
    step.src = b.identity_rows >= 0 ? -1 : b.reg;
    step.src_channel = b.identity_rows >= 0 ? b.identity_rows : 0;
    step.scale = signs.at(n);
    step.dst_channel = stack ? offset : 0;
    step.channels = b.out_channels;
    for (size_t d = 0; d < 3; ++d) {
      step.shift[d] = v.padding[d] - b.padding[d];
      for (size_t t = 0; t < b.tap_used[d].size(); ++t)
        if (b.tap_used[d][t]) v.tap_used[d][static_cast<size_t>(step.shift[d]) + t] = 1;
    }
    for (int64_t c = 0; c < b.out_channels; ++c) {
      for (int64_t c0 = 0; c0 < v.in_channels; ++c0)
        if (b.pairs[static_cast<size_t>(c * b.in_channels + c0)])
          v.pairs[static_cast<size_t>((step.dst_channel + c) * v.in_channels + c0)] = 1;
      if (b.constant[static_cast<size_t>(c)]) v.constant[static_cast<size_t>(step.dst_channel + c)] = 1;
    }
    steps.push_back(step);
    offset += b.out_channels;
  }
  v.ops.assign(ops.begin(), ops.end());
  const bool bias = v.any_constant();
  const int m = new_register(std::move(v), bias);
  for (FoldStep& s : steps) {
    s.dst = maps_.back().reg;
    program_.steps.push_back(s);
  }
  return m;
}

int LinearMapBuilder::slice(const Op& op, const LinearMap& u) {
  LinearMap v = u;
  v.out_channels = op.slice.length;
  v.identity_rows = u.identity_rows >= 0 ? u.identity_rows + op.slice.start : -1;
  v.pairs.assign(u.pairs.begin() + op.slice.start * u.in_channels,
                 u.pairs.begin() + (op.slice.start + op.slice.length) * u.in_channels);
  v.constant.assign(u.constant.begin() + op.slice.start, u.constant.begin() + op.slice.start + op.slice.length);
  FoldStep step;
  step.kind = FoldStepKind::accumulate;
  step.src = u.identity_rows >= 0 ? -1 : u.reg;
  step.src_channel = (u.identity_rows >= 0 ? u.identity_rows : 0) + op.slice.start;
  step.channels = op.slice.length;
  const bool bias = v.any_constant();
  const int m = new_register(std::move(v), bias);
  step.dst = maps_.back().reg;
  program_.steps.push_back(step);
  return m;
}

int LinearMapBuilder::batch_norm(const Op& op, const LinearMap& u) {
  LinearMap v = u;
  v.identity_rows = -1;
  v.constant.assign(static_cast<size_t>(v.out_channels), 1);  // the shift beta - scale * mean
  FoldStep step;
  step.kind = FoldStepKind::batch_norm;
  step.src = u.reg;
  step.weight = operand(false, op.params.at(0));
  step.bias = operand(false, op.params.at(1));
  step.mean = operand(true, op.buffers.at(0));
  step.var = operand(true, op.buffers.at(1));
  step.eps = op.norm.eps;
  const int m = new_register(std::move(v), true);
  step.dst = maps_.back().reg;
  program_.steps.push_back(step);
  return m;
}

ConvCut LinearMapBuilder::cut_conv(int m, int value) const {
  const LinearMap& v = map(m);
  if (v.reg < 0) throw LinearMapRefusal("the identity needs no conv");
  const FoldExtent size_x = extent(v.root), size_v = extent(value);
  ConvCut cut;
  std::vector<int64_t> kernel, stride, padding, dilation;
  for (size_t d = 3 - static_cast<size_t>(dims_); d < 3; ++d) {
    std::vector<int64_t> used;
    for (size_t t = 0; t < v.tap_used[d].size(); ++t)
      if (v.tap_used[d][t]) used.push_back(static_cast<int64_t>(t));
    if (used.empty()) throw LinearMapRefusal("the folded map is zero");
    int64_t step = 0;
    for (int64_t t : used) step = std::gcd(step, t - used.front());
    if (step == 0) step = 1;
    cut.first_tap[d] = used.front();
    cut.dilation[d] = step;
    cut.kernel[d] = (used.back() - used.front()) / step + 1;
    const int64_t pad = v.padding[d] - used.front();
    const std::string dim = std::to_string(static_cast<int64_t>(d) - (3 - dims_));
    if (pad < 0)
      throw LinearMapRefusal("the folded kernel would start " + std::to_string(-pad) + " inside the input in dim " +
                             dim + ": no zero padding expresses that");
    const int64_t size = window_output_size(size_x[d], cut.kernel[d], v.stride[d], pad, step);
    if (size != size_v[d])
      throw LinearMapRefusal("one conv (kernel " + std::to_string(cut.kernel[d]) + ", stride " +
                             std::to_string(v.stride[d]) + ", padding " + std::to_string(pad) + ", dilation " +
                             std::to_string(step) + ") gives size " + std::to_string(size) + " in dim " + dim +
                             ", where the value has " + std::to_string(size_v[d]));
    kernel.push_back(cut.kernel[d]);
    stride.push_back(v.stride[d]);
    padding.push_back(pad);
    dilation.push_back(step);
  }
  // The most groups whose blocks hold every channel pair that can be non-zero.
  int64_t groups = 1;
  for (int64_t g = std::gcd(v.out_channels, v.in_channels); g > 1; --g) {
    if (v.out_channels % g != 0 || v.in_channels % g != 0) continue;
    const int64_t og = v.out_channels / g, ig = v.in_channels / g;
    bool block_diagonal = true;
    for (int64_t c = 0; c < v.out_channels && block_diagonal; ++c)
      for (int64_t c0 = 0; c0 < v.in_channels; ++c0)
        if (v.pairs[static_cast<size_t>(c * v.in_channels + c0)] && c / og != c0 / ig) {
          block_diagonal = false;
          break;
        }
    if (block_diagonal) {
      groups = g;
      break;
    }
  }
  cut.attrs.out_channels = v.out_channels;
  cut.attrs.kernel = kernel;
  cut.attrs.stride = stride;
  cut.attrs.padding = padding;
  cut.attrs.dilation = dilation;
  cut.attrs.groups = groups;
  cut.attrs.bias = v.any_constant();
  return cut;
}

FoldProgram LinearMapBuilder::program_for(int m, const ConvCut& cut) const {
  const LinearMap& v = map(m);
  std::vector<char> needed(program_.registers.size(), 0);
  needed.at(static_cast<size_t>(v.reg)) = 1;
  // Registers only read earlier ones, and each one's steps follow its creation: one pass backwards.
  for (auto it = program_.steps.rbegin(); it != program_.steps.rend(); ++it)
    if (needed[static_cast<size_t>(it->dst)] && it->src >= 0) needed[static_cast<size_t>(it->src)] = 1;
  FoldProgram out;
  std::vector<int> reg_index(program_.registers.size(), -1), operand_index(program_.operands.size(), -1);
  for (size_t r = 0; r < program_.registers.size(); ++r)
    if (needed[r]) {
      reg_index[r] = static_cast<int>(out.registers.size());
      out.registers.push_back(program_.registers[r]);
    }
  auto renumber_operand = [&](int o) {
    if (o < 0) return -1;
    int& i = operand_index.at(static_cast<size_t>(o));
    if (i < 0) {
      i = static_cast<int>(out.operands.size());
      out.operands.push_back(program_.operands[static_cast<size_t>(o)]);
    }
    return i;
  };
  for (const FoldStep& s : program_.steps) {
    if (!needed[static_cast<size_t>(s.dst)]) continue;
    FoldStep t = s;
    t.dst = reg_index[static_cast<size_t>(s.dst)];
    t.src = s.src >= 0 ? reg_index[static_cast<size_t>(s.src)] : -1;
    t.weight = renumber_operand(s.weight);
    t.bias = renumber_operand(s.bias);
    t.mean = renumber_operand(s.mean);
    t.var = renumber_operand(s.var);
    out.steps.push_back(t);
  }
  out.result = reg_index[static_cast<size_t>(v.reg)];
  out.groups = cut.attrs.groups;
  out.first_tap = cut.first_tap;
  out.dilation = cut.dilation;
  out.kernel = cut.kernel;
  out.spatial_dims = dims_;
  return out;
}

}  // namespace convbench

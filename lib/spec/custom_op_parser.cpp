// The custom-variant half of variant_parser.hpp: op lists, their references and their shapes.
#include <algorithm>
#include <map>

#include "ops/graph_builder.hpp"
#include "ops/op_registry.hpp"
#include "spec/suggest.hpp"
#include "spec/variant_parser.hpp"

namespace convbench {
namespace {

// The op kinds and the keys each takes come from the op definitions (lib/ops/<op>.cpp).
std::vector<std::string> op_kind_names() {
  std::vector<std::string> names;
  for (const OpDefinition* d : op_definitions()) names.emplace_back(d->name);
  return names;
}

std::vector<std::string> op_keys(const std::string& op) {
  std::vector<std::string> keys = {"op", "name", "inputs"};
  const OpDefinition* d = find_op_definition(op);
  if (d) keys.insert(keys.end(), d->spec_fields.begin(), d->spec_fields.end());
  return keys;
}

std::vector<std::string> all_op_keys() {
  std::vector<std::string> all;
  for (const std::string& op : op_kind_names())
    for (const std::string& key : op_keys(op))
      if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
  return all;
}

std::string str(int64_t v) { return std::to_string(v); }

// The shape of a value without the batch: channels and spatial sizes.
struct ValueShape {
  int64_t channels = 0;
  std::vector<int64_t> spatial;
};

std::string shape_of(const ValueShape& v) {
  std::vector<int64_t> dims = {v.channels};
  dims.insert(dims.end(), v.spatial.begin(), v.spatial.end());
  return shape_text(dims);
}

class CustomGraphReader {
 public:
  CustomGraphReader(const Field& variant, const BlockSpec& block) : variant_(variant), block_(block) {
    shapes_["input"] = {block.in_channels, block.size};
  }

  void read(VariantSpec& out) {
    const auto ops_field = variant_.get("ops");
    if (!ops_field) variant_.fail_missing("ops", " (a custom variant needs its list of ops)");
    ops_ = ops_field->non_empty_list("ops");
    for (std::size_t i = 0; i < ops_.size(); ++i) out.ops.push_back(read_op(i));
    read_output(out);
  }

 private:
  CustomOpSpec read_op(std::size_t index) {
    const Field& o = ops_[index];
    if (!o.is_map()) o.fail("expected a map with `op`, `name` and `inputs`, got " + o.describe());
    CustomOpSpec op;
    op.key_path = o.path();
    op.where = o.where();
    const auto kind = o.get("op");
    if (!kind) {
      o.check_keys(all_op_keys(), " in an op");
      o.fail_missing("op", " (one of " + join_alternatives(op_kind_names()) + ")");
    }
    op.op = kind->as_choice(op_kind_names(), "op");
    o.check_keys(op_keys(op.op), " for a " + op.op + " op");

    const auto name = o.get("name");
    if (!name) o.fail_missing("name", " (the name later ops and `output` use)");
    op.name = name->as_string();
    if (op.name == "input") name->fail("\"input\" is the block input; give this op another name");
    if (shapes_.count(op.name)) name->fail("duplicate op name \"" + op.name + "\" in this variant");

    const std::vector<Field> input_fields = read_inputs(o, index, op);
    std::vector<ValueShape> in;
    for (const std::string& input : op.inputs) in.push_back(shapes_.at(input));

    ValueShape result = in.front();
    if (op.op == "conv" || op.op == "conv_transpose") result = read_conv(o, in.front(), op);
    if (op.op == "max_pool" || op.op == "avg_pool") result = read_pool(o, in.front(), op);
    if (op.op == "group_norm") {
      if (auto f = o.get("norm_groups")) op.norm_groups = f->as_int(1);
      if (in.front().channels % op.norm_groups != 0)
        o.locate("norm_groups")
            .fail("the input's " + str(in.front().channels) + " channels are not divisible by norm_groups " +
                  str(op.norm_groups));
    }
    if (op.op == "leaky_relu")
      if (auto f = o.get("negative_slope")) op.negative_slope = f->as_number();
    if (op.op == "dropout") {
      if (auto f = o.get("p")) {
        op.p = f->as_number();
        if (op.p < 0.0 || op.p >= 1.0) f->fail("must be in [0, 1), got " + f->node().text);
      }
    }
    if (op.op == "upsample") {
      if (auto f = o.get("scale")) op.scale = f->as_int(1);
      for (int64_t& s : result.spatial) {
        s *= op.scale;  // both <= 2^31: fits
        if (s > kMaxSpecDim) o.locate("scale").fail("the upsampled size " + str(s) + " is larger than 2^31");
      }
    }
    if (op.op == "add" || op.op == "sub") {
      if (in[0].channels != in[1].channels || in[0].spatial != in[1].spatial)
        input_fields[1].fail("\"" + op.inputs[1] + "\" is " + shape_of(in[1]) + " but \"" + op.inputs[0] + "\" is " +
                             shape_of(in[0]) + " (channels x spatial); " + op.op + " needs equal shapes");
    }
    if (op.op == "concat") {
      for (std::size_t i = 1; i < in.size(); ++i) {
        if (in[i].spatial != in[0].spatial)
          input_fields[i].fail("\"" + op.inputs[i] + "\" is " + shape_of(in[i]) + " but \"" + op.inputs[0] + "\" is " +
                               shape_of(in[0]) + " (channels x spatial); concat needs equal spatial sizes");
        result.channels += in[i].channels;  // each <= 2^31, checked below before overflow
        if (result.channels > kMaxSpecDim) input_fields[i].fail("the concatenation has more than 2^31 channels");
      }
    }

    std::vector<int64_t> tensor = {block_.batch, result.channels};
    tensor.insert(tensor.end(), result.spatial.begin(), result.spatial.end());
    if (!checked_product(tensor))
      o.fail("the output tensor " + shape_text(tensor) + " has more elements than int64 can count");
    shapes_[op.name] = result;
    order_.push_back(op.name);
    return op;
  }

  // Resolves `inputs` (a name or a list of names; unary ops default to the previous op) and
  // returns the Field of each entry for messages.
  std::vector<Field> read_inputs(const Field& o, std::size_t index, CustomOpSpec& op) {
    // How many inputs the kind takes: its definition's arity (max -1: any number).
    const OpDefinition& def = *find_op_definition(op.op);
    const int64_t lo = def.min_inputs, hi = def.max_inputs;
    std::vector<Field> fields;
    const auto inputs = o.get("inputs");
    if (!inputs) {
      if (lo > 1)
        o.fail_missing("inputs", " (" + op.op + " takes " + str(lo) + (hi == lo ? "" : " or more") + " value names)");
      op.inputs = {index == 0 ? "input" : order_.back()};
      fields = {o.locate("inputs")};
      return fields;
    }
    if (inputs->is_sequence()) {
      fields = inputs->items();
    } else if (inputs->is_string()) {
      fields = {*inputs};
    } else {
      inputs->fail("expected a value name or a list of value names, got " + inputs->describe());
    }
    const int64_t n = static_cast<int64_t>(fields.size());
    if (hi == lo && n != lo)
      inputs->fail(op.op + " takes exactly " + str(lo) + (lo == 1 ? " input" : " inputs") + ", got " + str(n));
    if (n < lo) inputs->fail(op.op + " takes at least " + str(lo) + " inputs, got " + str(n));
    if (hi >= 0 && n > hi) inputs->fail(op.op + " takes at most " + str(hi) + " inputs, got " + str(n));
    for (const Field& f : fields) {
      const std::string ref = f.as_string();
      if (!shapes_.count(ref)) f.fail(unknown_value_message(ref, index));
      op.inputs.push_back(ref);
    }
    return fields;
  }

  std::string unknown_value_message(const std::string& ref, std::size_t index) const {
    for (std::size_t later = index; later < ops_.size(); ++later) {
      const auto name = ops_[later].get("name");
      if (name && name->is_string() && name->node().text == ref)
        return "\"" + ref + "\" is " +
               (later == index ? "this op itself" : "defined later, by ops[" + str(static_cast<int64_t>(later)) + "]") +
               "; an op can only use \"input\" and earlier ops";
    }
    std::vector<std::string> known = {"input"};
    known.insert(known.end(), order_.begin(), order_.end());
    return "unknown value \"" + ref + "\" (known here: " + join_alternatives(known) + ")" + did_you_mean(ref, known);
  }

  ValueShape read_conv(const Field& o, const ValueShape& in, CustomOpSpec& op) {
    const int dims = block_.dims;
    if (auto g = o.get("groups")) {
      if (g->is_string()) {
        if (g->node().text != "depthwise")
          g->fail("expected a positive integer or \"depthwise\", got " + g->describe());
        op.groups = in.channels;
      } else {
        op.groups = g->as_int(1);
      }
    }
    op.out_channels = in.channels;
    if (auto f = o.get("out_channels")) op.out_channels = f->as_int(1);
    if (in.channels % op.groups != 0)
      o.locate("groups").fail("the input's " + str(in.channels) + " channels are not divisible by groups " +
                              str(op.groups));
    if (*op.out_channels % op.groups != 0)
      o.locate("out_channels")
          .fail("out_channels " + str(*op.out_channels) + " is not divisible by groups " + str(op.groups));
    const auto kernel = o.get("kernel"), stride = o.get("stride"), dilation = o.get("dilation");
    op.kernel = kernel ? kernel->as_per_dim(dims, 1) : block_.kernel;
    op.stride = stride ? stride->as_per_dim(dims, 1) : std::vector<int64_t>(dims, 1);
    op.dilation = dilation ? dilation->as_per_dim(dims, 1) : std::vector<int64_t>(dims, 1);
    std::optional<std::vector<int64_t>> padding;
    if (auto f = o.get("padding")) padding = f->as_padding(dims);
    if (!padding) {
      padding.emplace();
      for (int d = 0; d < dims; ++d) padding->push_back((*op.dilation)[d] * ((*op.kernel)[d] - 1) / 2);
    }
    op.padding = padding;
    op.bias = block_.bias;
    if (auto f = o.get("bias")) op.bias = f->as_bool();

    ValueShape out{*op.out_channels, {}};
    if (op.op == "conv") {
      for (int d = 0; d < dims; ++d) {
        const int64_t k = (*op.kernel)[d], p = (*op.padding)[d], dl = (*op.dilation)[d];
        const int64_t size = window_output_size(in.spatial[d], k, (*op.stride)[d], p, dl);
        if (size <= 0)
          o.locate("kernel").fail("the kernel spans " + str(dl * (k - 1) + 1) + " in dim " + str(d) +
                                  " but the padded input is only " + str(in.spatial[d] + 2 * p) + " (size " +
                                  str(in.spatial[d]) + " + 2 x padding " + str(p) + ")");
        out.spatial.push_back(size);
      }
      return out;
    }
    op.output_padding = std::vector<int64_t>(dims, 0);
    if (auto f = o.get("output_padding")) {
      op.output_padding = f->as_per_dim(dims, 0);
      for (int d = 0; d < dims; ++d)
        if ((*op.output_padding)[d] >= std::max((*op.stride)[d], (*op.dilation)[d]))
          f->fail("output_padding must be smaller than stride or dilation, got " + str((*op.output_padding)[d]) +
                  " in dim " + str(d));
    }
    for (int d = 0; d < dims; ++d) {
      // (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
      int64_t size = 0;
      const int64_t rest = (*op.output_padding)[d] + 1 - 2 * (*op.padding)[d];  // |rest| < 2^33
      const bool overflow = __builtin_mul_overflow(in.spatial[d] - 1, (*op.stride)[d], &size) ||
                            __builtin_add_overflow(size, (*op.dilation)[d] * ((*op.kernel)[d] - 1), &size) ||
                            __builtin_add_overflow(size, rest, &size);
      if (overflow || size > kMaxSpecDim) o.fail("the output size in dim " + str(d) + " is larger than 2^31");
      if (size <= 0)
        o.locate("padding").fail("the output size in dim " + str(d) + " would be " + str(size) + "; padding " +
                                 str((*op.padding)[d]) + " is too large");
      out.spatial.push_back(size);
    }
    return out;
  }

  ValueShape read_pool(const Field& o, const ValueShape& in, CustomOpSpec& op) {
    const int dims = block_.dims;
    const auto kernel = o.get("kernel"), stride = o.get("stride");
    // A pool downsamples by 2 unless told otherwise (README "Custom variants").
    op.kernel = kernel ? kernel->as_per_dim(dims, 1) : std::vector<int64_t>(dims, 2);
    op.stride = stride ? stride->as_per_dim(dims, 1) : *op.kernel;
    std::optional<std::vector<int64_t>> padding;
    if (auto f = o.get("padding")) {
      padding = f->as_padding(dims);
      if (!padding) {
        padding.emplace();
        for (int d = 0; d < dims; ++d) padding->push_back(((*op.kernel)[d] - 1) / 2);
      }
      for (int d = 0; d < dims; ++d)
        if (2 * (*padding)[d] > (*op.kernel)[d])
          f->fail("pool padding " + str((*padding)[d]) + " is more than half the kernel " + str((*op.kernel)[d]) +
                  " in dim " + str(d));
    }
    op.padding = padding.value_or(std::vector<int64_t>(dims, 0));
    ValueShape out{in.channels, {}};
    for (int d = 0; d < dims; ++d) {
      const int64_t k = (*op.kernel)[d], p = (*op.padding)[d];
      const int64_t size = window_output_size(in.spatial[d], k, (*op.stride)[d], p, 1);
      if (size <= 0)
        o.locate("kernel").fail("the pool window " + str(k) + " in dim " + str(d) +
                                " is larger than the padded input " + str(in.spatial[d] + 2 * p));
      out.spatial.push_back(size);
    }
    return out;
  }

  void read_output(VariantSpec& out) {
    out.output = out.ops.back().name;
    std::optional<Field> at;
    if (auto f = variant_.get("output")) {
      out.output = f->as_string();
      if (out.output == "input") f->fail("`output` must name an op; the block input cannot be the output");
      if (std::find(order_.begin(), order_.end(), out.output) == order_.end())
        f->fail("unknown op \"" + out.output + "\" (ops: " + join_alternatives(order_) + ")" +
                did_you_mean(out.output, order_));
      at = f;
    }
    check_every_op_reaches(out);
    const ValueShape& shape = shapes_.at(out.output);
    if (shape.channels != block_.out_channels)
      at.value_or(ops_.back())
          .fail("the variant's output \"" + out.output + "\" has " + str(shape.channels) +
                " channels but the block's out_channels is " + str(block_.out_channels));
  }

  // An op whose result never reaches the output would be measured for nothing (the graph
  // builder refuses it too); say so at the op.
  void check_every_op_reaches(const VariantSpec& out) const {
    std::map<std::string, bool> live = {{out.output, true}};
    for (std::size_t i = out.ops.size(); i-- > 0;) {
      const CustomOpSpec& op = out.ops[i];
      if (!live[op.name])
        ops_[i].fail("the result of \"" + op.name + "\" never reaches the variant's output \"" + out.output +
                     "\"; every op must contribute to it");
      for (const std::string& input : op.inputs) live[input] = true;
    }
  }

  const Field& variant_;
  const BlockSpec& block_;
  std::vector<Field> ops_;
  std::map<std::string, ValueShape> shapes_;  // "input" and every op so far
  std::vector<std::string> order_;            // op names so far, in order
};

}  // namespace

void parse_custom_ops(const Field& variant, const BlockSpec& block, VariantSpec& out) {
  CustomGraphReader(variant, block).read(out);
}

}  // namespace convbench

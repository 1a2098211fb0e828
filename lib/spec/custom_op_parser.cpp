// The custom-variant half of variant_parser.hpp: op lists, their references, their fields (as
// each kind's definition declares them) and their shapes (by the definitions' own rules).
#include <algorithm>
#include <map>

#include "graph/checked_math.hpp"
#include "ops/graph_builder.hpp"
#include "ops/op_registry.hpp"
#include "spec/suggest.hpp"
#include "spec/variant_parser.hpp"

namespace convbench {
namespace {

// The op kinds and the keys each takes come from the op definitions (lib/ops/<op>.cpp).
std::vector<std::string> op_kind_names() {
  std::vector<std::string> names;
  for (const OpDefinition* d : op_definitions())
    if (d->spec_op) names.emplace_back(d->name);
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

// Reads one declared field by its kind; a wrong type or range fails at the value.
FieldValue read_field(const Field& f, const OpField& declared, int dims) {
  switch (declared.kind) {
    case FieldKind::positive_int: return f.as_int(1);
    case FieldKind::groups:
      if (f.is_string()) {
        if (f.node().text != "depthwise") f.fail("expected a positive integer or \"depthwise\", got " + f.describe());
        return FieldKeyword{"depthwise"};
      }
      return f.as_int(1);
    case FieldKind::number: return f.as_number();
    case FieldKind::probability: {
      const double p = f.as_number();
      if (p < 0.0 || p >= 1.0) f.fail("must be in [0, 1), got " + f.node().text);
      return p;
    }
    case FieldKind::boolean: return f.as_bool();
    case FieldKind::per_dim_positive: return f.as_per_dim(dims, 1);
    case FieldKind::per_dim_nonneg: return f.as_per_dim(dims, 0);
    case FieldKind::padding: {
      auto padding = f.as_padding(dims);
      if (!padding) return FieldKeyword{"same"};
      return *padding;
    }
    case FieldKind::nonneg_int: return f.as_int(0);
    case FieldKind::keyword: return FieldKeyword{f.as_choice(declared.words, declared.key)};
  }
  f.fail("a field of an unknown kind");  // unreachable: every kind is handled above
}

// Reads a custom variant's ops in order, building its graph as it goes: each op's fields are read
// as its definition declares them, and its definition's shape rules (the graph builder's) check
// it, their errors pointed at the field at fault.
class CustomGraphReader {
 public:
  CustomGraphReader(const Field& variant, const BlockSpec& block)
      : variant_(variant), block_(block), builder_(block.name, block_input(block)) {
    values_["input"] = builder_.input();
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
    const OpDefinition& def = *find_op_definition(op.op);

    const auto name = o.get("name");
    if (!name) o.fail_missing("name", " (the name later ops and `output` use)");
    op.name = name->as_string();
    if (op.name == "input") name->fail("\"input\" is the block input; give this op another name");
    if (values_.count(op.name)) name->fail("duplicate op name \"" + op.name + "\" in this variant");

    const std::vector<Field> input_fields = read_inputs(o, index, op);
    std::vector<int> inputs;
    for (const std::string& input : op.inputs) inputs.push_back(values_.at(input));
    for (const OpField& declared : def.fields)
      if (auto f = o.get(declared.key)) op.fields.set(declared.key, read_field(*f, declared, block_.dims));

    int value = -1;
    try {
      value = builder_.add_from_fields(def.kind, op.name, inputs, op.fields, block_.kernel, block_.bias);
    } catch (const GraphError& e) {
      if (!e.site()) o.fail(e.detail());
      const ErrorSite& site = *e.site();
      if (site.input >= 0) input_fields.at(static_cast<std::size_t>(site.input)).fail(e.detail());
      if (site.key.empty()) o.fail(e.detail());
      o.locate(site.key).fail(e.detail());
    } catch (const CountOverflow&) {
      o.fail("the op's parameters have more elements than int64 can count");
    }
    const std::vector<int64_t>& tensor = builder_.desc(value).shape;
    if (!checked_product(tensor))
      o.fail("the output tensor " + shape_text(tensor) + " has more elements than int64 can count");
    values_[op.name] = value;
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
        o.fail_missing("inputs",
                       " (" + op.op + " takes " + std::to_string(lo) + (hi == lo ? "" : " or more") + " value names)");
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
      inputs->fail(op.op + " takes exactly " + std::to_string(lo) + (lo == 1 ? " input" : " inputs") + ", got " +
                   std::to_string(n));
    if (n < lo) inputs->fail(op.op + " takes at least " + std::to_string(lo) + " inputs, got " + std::to_string(n));
    if (hi >= 0 && n > hi)
      inputs->fail(op.op + " takes at most " + std::to_string(hi) + " inputs, got " + std::to_string(n));
    for (const Field& f : fields) {
      const std::string ref = f.as_string();
      if (!values_.count(ref)) f.fail(unknown_value_message(ref, index));
      op.inputs.push_back(ref);
    }
    return fields;
  }

  std::string unknown_value_message(const std::string& ref, std::size_t index) const {
    for (std::size_t later = index; later < ops_.size(); ++later) {
      const auto name = ops_[later].get("name");
      if (name && name->is_string() && name->node().text == ref)
        return "\"" + ref + "\" is " +
               (later == index ? "this op itself"
                               : "defined later, by ops[" + std::to_string(static_cast<int64_t>(later)) + "]") +
               "; an op can only use \"input\" and earlier ops";
    }
    std::vector<std::string> known = {"input"};
    known.insert(known.end(), order_.begin(), order_.end());
    return "unknown value \"" + ref + "\" (known here: " + join_alternatives(known) + ")" + did_you_mean(ref, known);
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
    const int64_t channels = builder_.desc(values_.at(out.output)).channels();
    if (channels != block_.out_channels)
      at.value_or(ops_.back())
          .fail("the variant's output \"" + out.output + "\" has " + std::to_string(channels) +
                " channels but the block's out_channels is " + std::to_string(block_.out_channels));
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
  GraphBuilder builder_;  // the variant's graph so far
  std::vector<Field> ops_;
  std::map<std::string, int> values_;  // "input" and every op so far -> value id in builder_
  std::vector<std::string> order_;     // op names so far, in order
};

}  // namespace

FieldValue read_op_field(const Field& f, const OpField& declared, int dims) { return read_field(f, declared, dims); }

void parse_custom_ops(const Field& variant, const BlockSpec& block, VariantSpec& out) {
  CustomGraphReader(variant, block).read(out);
}

}  // namespace convbench

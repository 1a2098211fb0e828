#include "variants/network_builder.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "graph/checked_math.hpp"
#include "ops/graph_builder.hpp"
#include "ops/op_json.hpp"
#include "ops/op_registry.hpp"
#include "spec/block_fields.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/network_spec.hpp"
#include "spec/spec_field.hpp"
#include "spec/suggest.hpp"
#include "spec/variant_parser.hpp"

namespace convbench {
namespace {

// Bounds that keep a typo (repeat: 100000, a unit that instantiates itself) from filling memory;
// the ops a variant expands to are bounded by NetworkSpec::max_ops (--max-network-ops).
constexpr int64_t kMaxRepeat = 10'000;
constexpr int kMaxUnitDepth = 32;

// A slot's keys: what the slot is, the block fields it may set for its conv, and its class.
std::vector<std::string> slot_keys() {
  std::vector<std::string> keys = {"op", "name", "inputs", "repeat"};
  keys.insert(keys.end(), slot_fields().begin(), slot_fields().end());
  keys.push_back("class");
  return keys;
}
const std::vector<std::string> kUnitInstanceKeys = {"unit", "name", "args", "repeat", "inputs"};
// Fields of a network custom variant's ops that may say a channel count relative to the slot.
const std::vector<std::string> kChannelFields = {"out_channels", "out_features", "groups"};
const std::vector<std::string> kWindowFields = {"kernel", "stride", "padding", "dilation"};

// "(6,128,4,16,16)", as PyTorch prints a size.
std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + ")";
}

std::vector<std::string> op_kind_names() {
  std::vector<std::string> names;
  for (const OpDefinition* d : op_definitions())
    if (d->spec_op) names.emplace_back(d->name);
  return names;
}

bool has_field(const OpDefinition& def, const std::string& key) {
  return std::find(def.spec_fields.begin(), def.spec_fields.end(), key) != def.spec_fields.end();
}

bool is_param_ref(const Field& f) { return f.is_string() && f.node().text.size() > 1 && f.node().text[0] == '$'; }

// An argument bound to a unit parameter: its value, and the scope whose values a value name in it
// refers to (the instantiating scope: `skip: down3` names the caller's stage).
struct Scope;
struct Binding {
  Field value;
  const Scope* names_in;
};

struct Scope {
  std::string prefix;  // of the ops' names: "down2." in a stage, "down2.block." in a unit instance
  int input = -1;
  std::map<std::string, int> values;  // entries so far -> value ids
  std::vector<std::string> order;     // entry names so far, for messages
  std::map<std::string, Binding> params;
  bool in_unit = false;
  std::string context;  // " (in unit \"u\" instantiated at ...)" for errors inside a unit
};

// A variant's parameter that does not fit a slot fails at the slot (its out_channels, which
// decides most fits), naming the slot and the variant (`context`): the variant fits other slots.
class SlotFitSite : public FitSite {
 public:
  SlotFitSite(const Field& at, const std::optional<Field>& variant, const std::string& context)
      : at_(at), variant_(variant), context_(context) {}
  bool given(const std::string& key) const override { return variant_ && variant_->get(key).has_value(); }
  [[noreturn]] void fail(const std::string&, const std::string& message) const override {
    at_.fail(message + context_);
  }

 private:
  const Field& at_;
  const std::optional<Field>& variant_;
  const std::string& context_;
};

class NetworkExpander {
 public:
  NetworkExpander(const BlockSpec& net, const VariantSpec& variant, std::vector<RecomputeSegment>* slots)
      : slots_(slots),
        net_(net),
        spec_(*net.network),
        variant_(variant),
        root_(spec_.field()),
        b_(net.name + "/" + variant.name, block_input(net)) {}

  Graph build() {
    const std::vector<Field> stages = root_.get("stages")->items();
    for (const Field& st : stages) stage_names_.push_back(st.get("name")->as_string());
    int x = b_.input();
    for (std::size_t i = 0; i < stages.size(); ++i) {
      current_stage_ = i;
      Scope s;
      s.prefix = stage_names_[i] + ".";
      s.input = x;
      x = run_entries(*stages[i].get("ops"), s);
      stage_out_[stage_names_[i]] = x;
    }
    check_fills();
    try {
      return b_.finish(x);
    } catch (const GraphError& e) {
      root_.locate("stages").fail(e.what());
    }
  }

 private:
  // --- values and parameters ---

  Binding param(const Field& ref, const Scope& s) const {
    const std::string name = ref.node().text.substr(1);
    if (!s.in_unit) ref.fail("\"" + ref.node().text + "\": parameters ($name) can only be used inside a unit");
    auto it = s.params.find(name);
    if (it == s.params.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : s.params) names.push_back(k);
      ref.fail("unknown parameter \"$" + name +
               "\" (this unit's params: " + (names.empty() ? std::string("none") : join_alternatives(names)) + ")" +
               did_you_mean(name, names) + s.context);
    }
    return it->second;
  }

  // A field's value with $param substituted; `from_param` says whether it was.
  Field value(const Field& f, const Scope& s, bool* from_param = nullptr) const {
    if (from_param) *from_param = is_param_ref(f);
    return is_param_ref(f) ? param(f, s).value : f;
  }

  int lookup(const Field& at, const std::string& ref, const Scope& s) const {
    if (ref == "input") return s.input;
    if (auto it = s.values.find(ref); it != s.values.end()) return it->second;
    if (!s.in_unit) {
      if (auto it = stage_out_.find(ref); it != stage_out_.end()) return it->second;
      auto later = std::find(stage_names_.begin(), stage_names_.end(), ref);
      if (later != stage_names_.end()) {
        const auto index = static_cast<std::size_t>(later - stage_names_.begin());
        at.fail("\"" + ref + "\" is " +
                (index == current_stage_
                     ? std::string("this stage itself")
                     : "a later stage (stages[" + std::to_string(static_cast<int64_t>(index)) + "])") +
                "; an entry can read only earlier stages' outputs" + s.context);
      }
    }
    std::vector<std::string> known = {"input"};
    known.insert(known.end(), s.order.begin(), s.order.end());
    if (!s.in_unit)
      for (std::size_t i = 0; i < current_stage_; ++i) known.push_back(stage_names_[i]);
    at.fail("unknown value \"" + ref + "\" (known here: " + join_alternatives(known) + ")" + did_you_mean(ref, known) +
            (s.in_unit ? " (a unit reads earlier stages only through its args)" : "") + s.context);
  }

  // A value name in `inputs` or `size_of`, or a $param holding one (looked up where it was given).
  int resolve_value(const Field& f, const Scope& s) const {
    if (is_param_ref(f)) {
      const Binding bound = param(f, s);
      if (!bound.value.is_string())
        bound.value.fail("expected a value name (for \"" + f.node().text + "\"), got " + bound.value.describe());
      return lookup(bound.value, bound.value.as_string(), *bound.names_in);
    }
    return lookup(f, f.as_string(), s);
  }

  // --- entries ---

  int run_entries(const Field& list, Scope& s) {
    int prev = s.input;
    for (const Field& e : list.items()) {
      if (!e.is_map()) e.fail("expected a map with `op` (or `unit`) and `name`, got " + e.describe() + s.context);
      const auto name_field = e.get("name");
      if (!name_field) e.fail_missing("name", " (the name later entries and the op names use)");
      const std::string name = name_field->as_string();
      if (name == "input")
        name_field->fail("\"input\" is the " + std::string(s.in_unit ? "unit" : "stage") +
                         " input; give the entry another name");
      if (name.find('.') != std::string::npos)
        name_field->fail("an entry name cannot contain '.' (op names join the parts with it), got \"" + name + "\"");
      if (s.values.count(name)) name_field->fail("duplicate entry name \"" + name + "\"" + s.context);

      int64_t repeat = -1;  // no `repeat`: one instance, not numbered
      if (auto r = e.get("repeat")) {
        bool from_param = false;
        const Field count = value(*r, s, &from_param);
        // A unit may skip an entry through an argument (a unit without a projection); a stage
        // entry written with 0 repeats is a mistake.
        repeat = count.as_int(s.in_unit && from_param ? 0 : 1, kMaxRepeat);
      }
      const std::vector<int> inputs = read_inputs(e, prev, s);
      int out = -1;
      if (repeat == 0) {
        if (inputs.size() != 1)
          e.locate("repeat").fail("an entry repeated 0 times must have one input (its name then means it)");
        out = inputs.front();
      } else if (repeat < 0) {
        out = apply(e, s.prefix + name, inputs, s);
      } else {
        if (repeat > 1 && inputs.size() != 1)
          e.locate("repeat").fail(
              "only an entry with one input can be repeated (each instance reads the previous one)");
        std::vector<int> in = inputs;
        for (int64_t k = 0; k < repeat; ++k) {
          out = apply(e, s.prefix + name + "." + std::to_string(k), in, s);
          in = {out};
        }
      }
      s.values[name] = out;
      s.order.push_back(name);
      prev = out;
    }
    return prev;
  }

  std::vector<int> read_inputs(const Field& e, int prev, const Scope& s) {
    const auto inputs = e.get("inputs");
    if (!inputs) return {prev};
    std::vector<Field> items;
    if (inputs->is_sequence()) {
      items = inputs->non_empty_list("value names");
    } else if (inputs->is_string()) {
      items = {*inputs};
    } else {
      inputs->fail("expected a value name or a list of value names, got " + inputs->describe());
    }
    std::vector<int> ids;
    for (const Field& f : items) ids.push_back(resolve_value(f, s));
    return ids;
  }

  // One instance of an entry; the limit on expanded ops is checked before it (its entries) and
  // after it (its ops), so the error points at the entry that crossed it.
  int apply(const Field& e, const std::string& full_name, const std::vector<int>& inputs, Scope& s) {
    if (++entries_ > spec_.max_ops) fail_size(e, "entries (each repeat and unit instance counted", s);
    const int out = apply_entry(e, full_name, inputs, s);
    if (b_.op_count() > spec_.max_ops) fail_size(e, "ops (" + std::to_string(b_.op_count()) + " with this entry", s);
    return out;
  }

  // `what`: the noun and the start of the parenthesis that says how far it got.
  [[noreturn]] void fail_size(const Field& e, const std::string& what, const Scope& s) const {
    e.fail("variant \"" + variant_.name + "\" expands the network to more than " + std::to_string(spec_.max_ops) + " " +
           what + "; check the `repeat` values, or raise the limit with --max-network-ops)" + s.context);
  }

  int apply_entry(const Field& e, const std::string& full_name, const std::vector<int>& inputs, Scope& s) {
    if (e.get("unit")) {
      if (e.get("op")) e.get("op")->fail("an entry is either an op (`op`) or a unit instance (`unit`), not both");
      return instantiate(e, full_name, inputs, s);
    }
    const auto op = e.get("op");
    if (!op) e.fail_missing("op", " (an op kind, `slot`, or `unit: NAME` for a unit instance)");
    std::vector<std::string> kinds = op_kind_names();
    kinds.insert(kinds.begin(), "slot");
    // The kind may be a $param (`op: $act`: a unit whose activation its instances choose).
    const std::string kind = value(*op, s).as_choice(kinds, "op");
    if (kind == "slot") return slot(e, full_name, inputs, s);
    return custom_op(e, kind, full_name, inputs, s);
  }

  void check_one_input(const Field& e, const std::vector<int>& inputs, const std::string& what) const {
    if (inputs.size() != 1)
      e.locate("inputs").fail(what + " takes exactly one input, got " +
                              std::to_string(static_cast<int64_t>(inputs.size())));
  }

  int instantiate(const Field& e, const std::string& full_name, const std::vector<int>& inputs, const Scope& caller) {
    e.check_keys(kUnitInstanceKeys, " in a unit instance");
    check_one_input(e, inputs, "a unit instance");
    const Field unit_name = *e.get("unit");
    const std::string name = unit_name.as_string();
    const auto units = root_.get("units");
    const std::optional<Field> unit = units ? units->get(name) : std::nullopt;
    if (!unit) {
      std::vector<std::string> names;
      if (units)
        for (const auto& [k, v] : units->entries()) names.push_back(k);
      unit_name.fail("unknown unit \"" + name +
                     "\" (units: " + (names.empty() ? std::string("none defined") : join_alternatives(names)) + ")" +
                     did_you_mean(name, names));
    }
    if (++depth_ > kMaxUnitDepth)
      unit_name.fail("units nest deeper than " + std::to_string(kMaxUnitDepth) + " (does a unit instantiate itself?)");
    Scope s;
    s.prefix = full_name + ".";
    s.input = inputs.front();
    s.in_unit = true;
    s.context = " (in unit \"" + name + "\" instantiated at " + e.path() + ", line " + std::to_string(e.where().line) +
                ")" + caller.context;
    bind_args(e, *unit, s, caller);
    const int out = run_entries(*unit->get("ops"), s);
    --depth_;
    return out;
  }

  void bind_args(const Field& e, const Field& unit, Scope& s, const Scope& caller) const {
    const auto params = unit.get("params");
    std::vector<std::string> names;
    if (params)
      for (const auto& [k, v] : params->entries()) names.push_back(k);
    const auto args = e.get("args");
    if (args && !args->is_map()) args->fail("expected a map of parameter -> value, got " + args->describe());
    if (args)
      for (const Field& key : args->keys())
        if (std::find(names.begin(), names.end(), key.node().text) == names.end())
          key.fail("unknown argument \"" + key.node().text + "\" for unit \"" +
                   unit.path().substr(unit.path().rfind('.') + 1) +
                   "\" (params: " + (names.empty() ? std::string("none") : join_alternatives(names)) + ")" +
                   did_you_mean(key.node().text, names));
    if (!params) return;
    for (const auto& [k, default_value] : params->entries()) {
      std::optional<Field> given = args ? args->get(k) : std::nullopt;
      if (!given) {
        if (default_value.is_string() && default_value.node().text == "required")
          (args ? *args : e).fail_missing(k, " (a required parameter of unit \"" + e.get("unit")->node().text + "\")");
        s.params.emplace(k, Binding{default_value, &s});
        continue;
      }
      // An argument that is itself a $param of the instantiating unit passes that binding on.
      if (is_param_ref(*given))
        s.params.emplace(k, param(*given, caller));
      else
        s.params.emplace(k, Binding{*given, &caller});
    }
  }

  // --- ops ---

  [[noreturn]] void fail_graph(const Field& e, const GraphError& err, const std::vector<int>& inputs,
                               const std::string& kind, const Scope& s) const {
    std::string message = err.detail();
    if (inputs.size() >= 2) {
      message += " (" + kind + " of ";
      for (std::size_t i = 0; i < inputs.size(); ++i)
        message += (i ? " and " : "") + shape_tuple(b_.desc(inputs[i]).shape);
      message += ")";
    }
    message += s.context;
    if (err.site() && !err.site()->key.empty() && err.site()->key != "inputs") e.locate(err.site()->key).fail(message);
    if (err.site() && err.site()->key == "inputs") {
      // At the operand at fault when the entry lists its inputs.
      const Field at = e.locate("inputs");
      const auto index = static_cast<std::size_t>(err.site()->input);
      if (at.is_sequence() && err.site()->input >= 0 && index < at.items().size()) at.items()[index].fail(message);
      at.fail(message);
    }
    e.fail(message);
  }

  int add_checked(const Field& e, OpKind kind, const std::string& name, const std::vector<int>& inputs,
                  const OpFieldValues& fields, const std::vector<int64_t>& kernel, bool bias, const Scope& s) {
    int id = -1;
    try {
      id = b_.add_from_fields(kind, name, inputs, fields, kernel, bias);
    } catch (const GraphError& err) {
      fail_graph(e, err, inputs, std::string(to_string(kind)), s);
    } catch (const CountOverflow&) {
      e.fail("the op's parameters have more elements than int64 can count" + s.context);
    }
    if (!checked_product(b_.desc(id).shape))
      e.fail("the output tensor " + shape_text(b_.desc(id).shape) + " has more elements than int64 can count" +
             s.context);
    return id;
  }

  void check_arity(const Field& e, const OpDefinition& def, const std::vector<int>& inputs) const {
    const int64_t n = static_cast<int64_t>(inputs.size()), lo = def.min_inputs, hi = def.max_inputs;
    const std::string op(def.name);
    if (!e.get("inputs") && lo > 1)
      e.fail_missing("inputs",
                     " (" + op + " takes " + std::to_string(lo) + (hi == lo ? "" : " or more") + " value names)");
    if (hi == lo && n != lo)
      e.locate("inputs").fail(op + " takes exactly " + std::to_string(lo) + (lo == 1 ? " input" : " inputs") +
                              ", got " + std::to_string(n));
    if (n < lo)
      e.locate("inputs").fail(op + " takes at least " + std::to_string(lo) + " inputs, got " + std::to_string(n));
    if (hi >= 0 && n > hi)
      e.locate("inputs").fail(op + " takes at most " + std::to_string(hi) + " inputs, got " + std::to_string(n));
  }

  // An op entry of a stage or unit: its fields as its definition declares them, $params
  // substituted; `size_of: VALUE` (upsample) sets `size` to that value's spatial size.
  int custom_op(const Field& e, const std::string& kind, const std::string& full_name, const std::vector<int>& inputs,
                const Scope& s) {
    const OpDefinition& def = *find_op_definition(kind);
    std::vector<std::string> keys = {"op", "name", "inputs", "repeat"};
    keys.insert(keys.end(), def.spec_fields.begin(), def.spec_fields.end());
    if (def.kind == OpKind::upsample) keys.push_back("size_of");
    e.check_keys(keys, " for a " + std::string(def.name) + " op");
    check_arity(e, def, inputs);
    OpFieldValues fields;
    for (const OpField& declared : def.fields)
      if (auto f = e.get(declared.key)) fields.set(declared.key, read_op_field(value(*f, s), declared, net_.dims));
    if (auto f = e.get("size_of")) {
      if (!has_field(def, "size")) f->fail("size_of needs upsample's `size` field, which this build's upsample lacks");
      if (e.get("size") || e.get("scale")) f->fail("give either size_of or size/scale, not both");
      const TensorDesc& of = b_.desc(resolve_value(*f, s));
      fields.set("size", std::vector<int64_t>(of.shape.begin() + 2, of.shape.end()));
    }
    return add_checked(e, def.kind, full_name, inputs, fields, net_.kernel, net_.bias, s);
  }

  // --- slots ---

  int slot(const Field& e, const std::string& full_name, const std::vector<int>& inputs, const Scope& s) {
    const int first = b_.op_count();
    const int y = fill_slot(e, full_name, inputs, s);
    if (slots_) slots_->push_back({full_name, first, b_.op_count()});
    return y;
  }

  int fill_slot(const Field& e, const std::string& full_name, const std::vector<int>& inputs, const Scope& s) {
    static const std::vector<std::string> keys = slot_keys();
    e.check_keys(keys, " for a slot");
    check_one_input(e, inputs, "a slot");
    const int x = inputs.front();
    const TensorDesc& in = b_.desc(x);
    BlockSpec slot = net_;
    slot.variants.clear();
    slot.network.reset();
    slot.point.clear();
    slot.key_path = e.path();
    slot.where = e.where();
    const int dims = net_.dims;
    slot.in_channels = in.channels();
    slot.size.assign(in.shape.begin() + 2, in.shape.end());
    slot.out_channels = in.channels();
    if (auto f = e.get("out_channels")) slot.out_channels = value(*f, s).as_int(1);
    if (auto f = e.get("kernel")) slot.kernel = value(*f, s).as_per_dim(dims, 1);
    slot.stride.assign(static_cast<std::size_t>(dims), 1);
    if (auto f = e.get("stride")) slot.stride = value(*f, s).as_per_dim(dims, 1);
    if (auto f = e.get("dilation")) slot.dilation = value(*f, s).as_per_dim(dims, 1);
    std::optional<std::vector<int64_t>> padding = spec_.padding;
    if (auto f = e.get("padding")) padding = value(*f, s).as_padding(dims);
    slot.padding.clear();
    if (padding) {
      slot.padding = *padding;
    } else {
      for (int d = 0; d < dims; ++d) slot.padding.push_back(slot.dilation[d] * (slot.kernel[d] - 1) / 2);
    }
    // bias, norm, act and dropout as a block reads them (the slot's keys allow no others).
    read_layer_fields(
        [&](const std::string& key) {
          const auto f = e.get(key);
          return f ? std::optional<Field>(value(*f, s)) : std::nullopt;
        },
        slot);
    slot.residual = false;
    std::string cls = "conv";
    if (auto f = e.get("class")) cls = value(*f, s).as_string();
    classes_.insert(cls);

    const bool fills =
        variant_.fills.empty() || std::find(variant_.fills.begin(), variant_.fills.end(), cls) != variant_.fills.end();
    VariantSpec standard;
    standard.kind = standard.name = "standard";
    const VariantSpec& v = fills ? variant_ : standard;
    const std::string prefix = full_name + ".";
    const std::string filling = " (slot \"" + full_name + "\" filled by variant \"" + v.name + "\", " +
                                shape_text({slot.in_channels}) + " -> " + shape_text({slot.out_channels}) +
                                " channels)" + s.context;
    const BlockKindDefinition& kind = block_kind(v.kind);
    if (kind.block_ops) return custom_slot(e, slot, v, x, prefix, filling);  // its ops replace the slot's conv
    check_fits(e, slot, v, kind, filling);
    try {
      BlockAssembler a(b_, slot, prefix, spec_.dropout_kind);
      return a.finish_main_path(x, kind.main_path(a, v, x));
    } catch (const GraphError& err) {
      fail_graph(e, err, {x}, "slot", Scope{"", -1, {}, {}, {}, false, filling});
    } catch (const CountOverflow&) {
      e.fail("the slot's parameters have more elements than int64 can count" + filling);
    }
  }

  // The kind's channel rules, checked per slot (the slots differ in channels), and the group norm
  // after the slot's last conv.
  void check_fits(const Field& e, const BlockSpec& slot, const VariantSpec& v, const BlockKindDefinition& kind,
                  const std::string& ctx) const {
    const Field at = e.get("out_channels").value_or(e);
    const std::optional<Field> written = variant_field(v);
    if (kind.fit) kind.fit(v, slot, SlotFitSite(at, written, ctx));
    if (slot.norm == NormKind::group && slot.out_channels % slot.norm_groups != 0)
      at.fail("group norm after the conv needs its " + std::to_string(slot.out_channels) +
              " channels divisible by norm_groups " + std::to_string(slot.norm_groups) + ctx);
  }

  std::optional<Field> variant_field(const VariantSpec& v) const {
    for (const Field& f : root_.get("variants")->items()) {
      const auto name = f.get("name");
      const std::string n = name                          ? name->node().text
                            : f.is_map() && f.get("kind") ? f.get("kind")->node().text
                                                          : f.node().text;
      if (n == v.name) return f;
    }
    return std::nullopt;
  }

  // A channel field of a network custom variant's op: an integer, or in, out, in*K, out/K.
  FieldValue channel_value(const Field& f, const OpField& declared, const BlockSpec& slot,
                           const std::string& ctx) const {
    if (!f.is_string() || (declared.kind == FieldKind::groups && f.node().text == "depthwise"))
      return read_op_field(f, declared, slot.dims);
    const std::string& t = f.node().text;
    const std::string base = t.substr(0, t.find_first_of("*/"));
    if (base != "in" && base != "out") f.fail("expected an integer, in, out, in*K or out/K, got \"" + t + "\"" + ctx);
    const int64_t channels = base == "in" ? slot.in_channels : slot.out_channels;
    if (base.size() == t.size()) return channels;
    const char op = t[base.size()];
    int64_t k = 0;
    const char* first = t.data() + base.size() + 1;
    const auto [end, ec] = std::from_chars(first, t.data() + t.size(), k);
    if (ec != std::errc() || end != t.data() + t.size() || k < 1 || k > kMaxSpecDim)
      f.fail("expected " + base + op + "K with K a positive integer, got \"" + t + "\"" + ctx);
    if (op == '/') {
      if (channels % k != 0)
        f.fail(t + ": the slot's " + base + " channels " + std::to_string(channels) + " are not divisible by " +
               std::to_string(k) + ctx);
      return channels / k;
    }
    return channels * k;  // both <= 2^31: fits; the graph checks the tensors
  }

  // A custom variant in a slot: its ops replace the slot's conv; the slot's norm, act and
  // dropout follow. `in`/`out` are the slot's channels, `slot` its kernel/stride/padding/dilation.
  int custom_slot(const Field& e, const BlockSpec& slot, const VariantSpec& v, int x, const std::string& prefix,
                  const std::string& ctx) {
    const Field vf = *variant_field(v);
    const std::vector<Field> ops = vf.get("ops")->items();
    std::map<std::string, int> values = {{"input", x}};
    std::vector<std::string> order;
    int last = x;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Field& o = ops[i];
      const std::vector<std::string> kinds = op_kind_names();
      const OpDefinition& def = *find_op_definition(o.get("op")->as_choice(kinds, "op"));
      std::vector<std::string> keys = {"op", "name", "inputs"};
      keys.insert(keys.end(), def.spec_fields.begin(), def.spec_fields.end());
      o.check_keys(keys, " for a " + std::string(def.name) + " op");
      const std::string name = o.get("name")->as_string();
      if (name == "input" || values.count(name) || name.find('.') != std::string::npos)
        o.get("name")->fail("\"" + name + "\" is " +
                            (name == "input"      ? "the slot input"
                             : values.count(name) ? "already an op of this variant"
                                                  : "not a name without '.'") +
                            "; give the op another name");
      std::vector<int> inputs = {last};
      if (auto in = o.get("inputs")) {
        inputs.clear();
        for (const Field& f : in->is_sequence() ? in->non_empty_list("value names") : std::vector<Field>{*in}) {
          const std::string ref = f.as_string();
          if (!values.count(ref))
            f.fail("unknown value \"" + ref + "\" (known here: input" + (order.empty() ? "" : ", ") +
                   join_alternatives(order) + ")" + did_you_mean(ref, order));
          inputs.push_back(values.at(ref));
        }
      }
      check_arity(o, def, inputs);
      OpFieldValues fields;
      for (const OpField& declared : def.fields) {
        auto f = o.get(declared.key);
        if (!f) continue;
        const bool window = std::find(kWindowFields.begin(), kWindowFields.end(), declared.key) != kWindowFields.end();
        if (window && f->is_string() && f->node().text == "slot") {
          const std::vector<int64_t>& v2 = declared.key == "kernel"    ? slot.kernel
                                           : declared.key == "stride"  ? slot.stride
                                           : declared.key == "padding" ? slot.padding
                                                                       : slot.dilation;
          fields.set(declared.key, v2);
        } else if (std::find(kChannelFields.begin(), kChannelFields.end(), declared.key) != kChannelFields.end()) {
          fields.set(declared.key, channel_value(*f, declared, slot, ctx));
        } else {
          fields.set(declared.key, read_op_field(*f, declared, slot.dims));
        }
      }
      last = add_checked(o, def.kind, prefix + name, inputs, fields, slot.kernel, slot.bias,
                         Scope{"", -1, {}, {}, {}, false, ctx});
      values[name] = last;
      order.push_back(name);
    }
    int y = last;
    if (auto out = vf.get("output")) {
      if (!values.count(out->as_string()) || out->as_string() == "input")
        out->fail("unknown op \"" + out->as_string() + "\" (ops: " + join_alternatives(order) + ")");
      y = values.at(out->as_string());
    }
    if (b_.desc(y).channels() != slot.out_channels)
      (vf.get("output") ? *vf.get("output") : ops.back())
          .fail("the variant's output has " + std::to_string(b_.desc(y).channels()) +
                " channels but the slot's out_channels is " + std::to_string(slot.out_channels) + ctx);
    try {
      BlockAssembler a(b_, slot, prefix, spec_.dropout_kind);
      return a.dropout(a.norm_act("", y));
    } catch (const GraphError& err) {
      fail_graph(e, err, {y}, "slot", Scope{"", -1, {}, {}, {}, false, ctx});
    }
  }

  void check_fills() const {
    if (variant_.fills.empty()) return;
    const std::optional<Field> vf = variant_field(variant_);
    for (const Field& c : vf->get("fills")->items())
      if (!classes_.count(c.node().text))
        c.fail("no slot of the network has class \"" + c.node().text + "\" (slot classes: " +
               join_alternatives(std::vector<std::string>(classes_.begin(), classes_.end())) + ")");
  }

  std::vector<RecomputeSegment>* slots_;
  const BlockSpec& net_;
  const NetworkSpec& spec_;
  const VariantSpec& variant_;
  const Field root_;
  GraphBuilder b_;
  std::vector<std::string> stage_names_;
  std::map<std::string, int> stage_out_;
  std::size_t current_stage_ = 0;
  std::set<std::string> classes_;  // the classes of every slot expanded
  int64_t entries_ = 0;
  int depth_ = 0;
};

}  // namespace

Graph build_network_graph(const BlockSpec& network, const VariantSpec& variant, std::vector<RecomputeSegment>* slots) {
  return NetworkExpander(network, variant, slots).build();
}

nlohmann::ordered_json expanded_ops_json(const Graph& graph) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const Op& op : graph.ops) {
    nlohmann::ordered_json entry = {{"name", op.name},
                                    {"op", std::string(to_string(op.kind))},
                                    {"inputs", op_input_names(graph, op)},
                                    {"output_shape", graph.desc(op.output).shape}};
    add_op_attributes(op, entry);
    ops.push_back(std::move(entry));
  }
  return ops;
}

}  // namespace convbench

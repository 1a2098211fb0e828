#include "spec/spec_field.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "spec/suggest.hpp"

namespace convbench {
namespace {

std::string quoted(const std::string& text) {
  // Long values would drown the message; the location already says where they are.
  constexpr std::size_t kMax = 40;
  return "\"" + (text.size() > kMax ? text.substr(0, kMax) + "..." : text) + "\"";
}

std::string dims_word(int dims) { return dims == 1 ? "1 integer" : std::to_string(dims) + " integers"; }

}  // namespace

std::optional<int64_t> checked_product(const std::vector<int64_t>& factors) {
  int64_t product = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(product, f, &product)) return std::nullopt;
  return product;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string out;
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "x" : "") + std::to_string(dims[i]);
  return out;
}

void Field::fail(const std::string& message) const { throw InputError(where(), path_, message); }

void Field::fail_missing(const std::string& key, const std::string& hint) const {
  throw InputError(where(), path_.empty() ? key : path_ + "." + key, "missing required field \"" + key + "\"" + hint);
}

std::string Field::describe() const {
  switch (node_->kind) {
    case SourceNode::Kind::null: return "null (an empty value)";
    case SourceNode::Kind::sequence: return "a list";
    case SourceNode::Kind::map: return "a map";
    case SourceNode::Kind::scalar: break;
  }
  switch (scalar_type(*node_)) {
    case ScalarType::boolean: return "the boolean " + node_->text;
    case ScalarType::integer: return "the integer " + node_->text;
    case ScalarType::number: return "the number " + node_->text;
    case ScalarType::null: return "null";
    case ScalarType::string: break;
  }
  return "the string " + quoted(node_->text);
}

Field Field::child(const SourceNode& node, const std::string& key) const {
  return Field(node, path_.empty() ? key : path_ + "." + key, *file_);
}

std::optional<Field> Field::get(const std::string& key) const {
  if (!is_map()) return std::nullopt;
  for (const auto& [k, v] : node_->entries)
    if (k->text == key) return child(*v, key);
  return std::nullopt;
}

Field Field::locate(const std::string& key) const {
  if (auto value = get(key)) return *value;
  return child(*node_, key);
}

void Field::check_keys(const std::vector<std::string>& allowed, const std::string& context) const {
  for (const auto& [k, v] : node_->entries) {
    if (std::find(allowed.begin(), allowed.end(), k->text) != allowed.end()) continue;
    std::string message = "unknown key " + quoted(k->text) + context;
    if (k->text == "<<") {
      message += " (YAML merge keys are not supported; use `defaults` or repeat the fields)";
    } else if (const std::string hint = did_you_mean(k->text, allowed); !hint.empty()) {
      message += hint;
    } else if (allowed.size() <= 8) {
      message += " (valid keys: " + join_alternatives(allowed) + ")";
    }
    child(*k, k->text).fail(message);
  }
}

std::vector<std::pair<std::string, Field>> Field::entries() const {
  std::vector<std::pair<std::string, Field>> out;
  for (const auto& [k, v] : node_->entries) out.emplace_back(k->text, child(*v, k->text));
  return out;
}

std::vector<Field> Field::keys() const {
  std::vector<Field> out;
  for (const auto& [k, v] : node_->entries) out.push_back(child(*k, k->text));
  return out;
}

std::vector<Field> Field::items() const {
  std::vector<Field> out;
  for (std::size_t i = 0; i < node_->items.size(); ++i)
    out.emplace_back(*node_->items[i], path_ + "[" + std::to_string(i) + "]", *file_);
  return out;
}

std::vector<Field> Field::non_empty_list(const std::string& what) const {
  if (!is_sequence()) fail("expected a list of " + what + ", got " + describe());
  if (node_->items.empty()) fail("the list of " + what + " is empty");
  return items();
}

int64_t Field::as_int(int64_t min, int64_t max) const {
  if (scalar_type(*node_) != ScalarType::integer || node_->kind != SourceNode::Kind::scalar)
    fail("expected an integer, got " + describe());
  std::string_view text = node_->text;
  if (text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    fail("the integer " + node_->text + " is out of range (at most " + std::to_string(max) + ")");
  if (value < min) {
    if (min == 1) fail("must be positive, got " + std::to_string(value));
    if (min == 0) fail("must not be negative, got " + std::to_string(value));
    fail("must be at least " + std::to_string(min) + ", got " + std::to_string(value));
  }
  if (value > max)
    fail("the integer " + std::to_string(value) + " is too large (at most " + std::to_string(max) +
         (max == kMaxSpecDim ? " = 2^31" : "") + ")");
  return value;
}

double Field::as_number() const {
  const ScalarType type = scalar_type(*node_);
  if (node_->kind != SourceNode::Kind::scalar || (type != ScalarType::integer && type != ScalarType::number))
    fail("expected a number, got " + describe());
  const double value = std::strtod(node_->text.c_str(), nullptr);
  if (!std::isfinite(value)) fail("the number " + node_->text + " is out of range");
  return value;
}

bool Field::as_bool() const {
  if (scalar_type(*node_) != ScalarType::boolean || node_->kind != SourceNode::Kind::scalar)
    fail("expected true or false, got " + describe());
  return node_->text == "true";
}

std::string Field::as_string() const {
  if (!is_string()) fail("expected a string, got " + describe());
  if (node_->text.empty()) fail("must not be empty");
  return node_->text;
}

std::string Field::as_choice(const std::vector<std::string>& choices, const std::string& what) const {
  if (!is_string()) fail("expected " + join_alternatives(choices) + ", got " + describe());
  const std::string& text = node_->text;
  if (std::find(choices.begin(), choices.end(), text) == choices.end())
    fail("unknown " + what + " " + quoted(text) + " (expected " + join_alternatives(choices) + ")" +
         did_you_mean(text, choices));
  return text;
}

std::vector<int64_t> Field::as_per_dim(int dims, int64_t min) const {
  if (is_sequence()) {
    const std::vector<Field> list = items();
    if (static_cast<int>(list.size()) != dims)
      fail("expected " + dims_word(dims) + " (one per spatial dim), got a list of " + std::to_string(list.size()));
    std::vector<int64_t> out;
    for (const Field& item : list) out.push_back(item.as_int(min));
    return out;
  }
  if (scalar_type(*node_) != ScalarType::integer || node_->kind != SourceNode::Kind::scalar)
    fail("expected an integer or a list of " + dims_word(dims) + ", got " + describe());
  return std::vector<int64_t>(static_cast<std::size_t>(dims), as_int(min));
}

std::optional<std::vector<int64_t>> Field::as_padding(int dims) const {
  if (is_string()) {
    if (node_->text == "same") return std::nullopt;
    fail("expected \"same\", an integer or a list of " + dims_word(dims) + ", got " + describe());
  }
  if (!is_sequence() && scalar_type(*node_) != ScalarType::integer)
    fail("expected \"same\", an integer or a list of " + dims_word(dims) + ", got " + describe());
  return as_per_dim(dims, 0);
}

}  // namespace convbench

// The fields a custom op of some kind may set in a spec, as its definition declares them: each
// key with the kind of value it takes. The spec parser reads every declared field by its kind
// (so a wrong type or range is reported at the value, with file:line:col and key path) and hands
// the values to the definition's apply_fields, which turns them into the op's attributes and
// applies the defaults, some of which depend on the block (its kernel, its bias) or on the input.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graph/op.hpp"

namespace convbench {

enum class FieldKind {
  positive_int,      // an integer in [1, 2^31]
  groups,            // a positive integer, or "depthwise": as many groups as input channels
  number,            // any finite number
  probability,       // a number in [0, 1)
  boolean,           // true or false
  per_dim_positive,  // an integer (repeated per spatial dim) or one per dim, each >= 1
  per_dim_nonneg,    // the same, each >= 0
  padding,           // per_dim_nonneg, or "same"
  keyword,           // one of the field's `words` (upsample's mode)
};

struct OpField {
  std::string key;
  FieldKind kind;
  std::vector<std::string> words = {};  // FieldKind::keyword: the words it may hold
};

// A keyword a field may hold instead of a number ("same" padding, "depthwise" groups).
struct FieldKeyword {
  std::string word;
};

// One field's value as the spec gave it.
using FieldValue = std::variant<int64_t, double, bool, std::vector<int64_t>, FieldKeyword>;

// The fields a custom op sets, by key; a key the spec leaves out is absent.
class OpFieldValues {
 public:
  void set(const std::string& key, FieldValue value) { values_[key] = std::move(value); }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  // The value under `key` when it is set and holds a T.
  template <class T>
  std::optional<T> get(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end() || !std::holds_alternative<T>(it->second)) return std::nullopt;
    return std::get<T>(it->second);
  }
  bool is_keyword(const std::string& key, const std::string& word) const {
    const auto k = get<FieldKeyword>(key);
    return k && k->word == word;
  }

 private:
  std::map<std::string, FieldValue> values_;
};

// What a field's default may depend on besides the op itself.
struct FieldContext {
  int dims = 2;                       // spatial dims of the block
  int64_t input_channels = 0;         // of the op's first input
  std::vector<int64_t> block_kernel;  // the block's kernel, per dim
  bool block_bias = true;             // the block's bias
};

}  // namespace convbench

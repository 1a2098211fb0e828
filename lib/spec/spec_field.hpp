// One value of a spec file together with its key path, and typed reads of it that fail with a
// InputError pointing at the value ("blocks[0].kernel: expected an integer, got ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape_rules.hpp"
#include "spec/source_tree.hpp"
#include "util/enum_words.hpp"
#include "util/input_error.hpp"

namespace convbench {

// The largest size, channel count, kernel, stride, ... a spec may state: the graph's own limit
// per dim. Products of two such numbers always fit in int64; larger products are checked
// (checked_product).
constexpr int64_t kMaxSpecDim = kMaxDimSize;

// The product, or nullopt when it overflows int64.
std::optional<int64_t> checked_product(const std::vector<int64_t>& factors);

// "6x16x32x32"
std::string shape_text(const std::vector<int64_t>& dims);

class Field {
 public:
  // `node` and `file` must outlive the Field (they live for one parse).
  Field(const SourceNode& node, std::string path, const std::string& file)
      : node_(&node), path_(std::move(path)), file_(&file) {}

  const SourceNode& node() const { return *node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  SourceLocation where() const { return {*file_, node_->line, node_->column}; }

  [[noreturn]] void fail(const std::string& message) const;
  // For a required key this map lacks: located at the map, key path naming the key.
  [[noreturn]] void fail_missing(const std::string& key, const std::string& hint = "") const;

  bool is_map() const { return node_->kind == SourceNode::Kind::map; }
  bool is_sequence() const { return node_->kind == SourceNode::Kind::sequence; }
  bool is_string() const { return scalar_type(*node_) == ScalarType::string && !is_map() && !is_sequence(); }
  // "the integer 3", "the string \"abc\"", "a list", ...
  std::string describe() const;

  // Maps. `get` returns the value of `key` when the map has it.
  std::optional<Field> get(const std::string& key) const;
  // The value of `key` when given, else this node under the key's path: where to point when a
  // defaulted or missing value is at fault.
  Field locate(const std::string& key) const;
  // Rejects keys outside `allowed`, suggesting the nearest one. `context` is appended to the
  // message, e.g. " for a relu op".
  void check_keys(const std::vector<std::string>& allowed, const std::string& context = "") const;
  std::vector<std::pair<std::string, Field>> entries() const;
  std::vector<Field> keys() const;  // the key scalars, located where the keys are written

  // Sequences.
  std::vector<Field> items() const;
  // A non-empty list; `what` names the items in messages ("blocks", "variants").
  std::vector<Field> non_empty_list(const std::string& what) const;

  // Typed reads.
  int64_t as_int(int64_t min, int64_t max = kMaxSpecDim) const;
  double as_number() const;  // any finite number, integers included
  bool as_bool() const;
  std::string as_string() const;  // a non-empty string
  // One of `choices`; `what` names the value in messages ("norm").
  std::string as_choice(const std::vector<std::string>& choices, const std::string& what) const;
  // One of the table's words, as its value (util/enum_words.hpp); refused as as_choice refuses.
  template <class Enum>
  Enum as_enum(const EnumWords<Enum>& table, const std::string& what) const {
    return *value_of(table, as_choice(words_of(table), what));
  }
  // An integer (repeated) or a list of exactly `dims` integers, each >= `min`.
  std::vector<int64_t> as_per_dim(int dims, int64_t min) const;
  // Like as_per_dim, but also "same": nullopt means "same".
  std::optional<std::vector<int64_t>> as_padding(int dims) const;

 private:
  Field child(const SourceNode& node, const std::string& key) const;

  const SourceNode* node_;
  std::string path_;
  const std::string* file_;
};

}  // namespace convbench

#pragma once
// The fields a block and a network read the same way (configs/README.md "Spec format"): how its convs are
// normalised, activated and dropped out (bias, norm, norm_groups, act, negative_slope, dropout),
// and how it runs (dtype, precision, layout, mode, memory_policy). `find` gives a field's value at the
// current sweep point, or nothing when it is not set.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "spec/spec.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

// Every key a block map and a network map may have, in one table (configs/README.md "Spec format"
// and "Networks"): where the key is allowed and whether a sweep may set it there. The loaders'
// key checks, their messages (which list the keys in this order), `--sweep`'s check and the
// sweep map's check all read it, so a new field is one row here plus its reader.
struct BlockFieldKey {
  const char* key;
  bool in_block = false, in_network = false;
  // Whether `sweep:` / `--sweep` may set it where it is allowed. A block's every field but name
  // and variants is sweepable; a network's identity, slots and structure are not.
  bool block_sweepable = false, network_sweepable = false;
  // Whether a network's slot may set it for its own conv (variants/network_builder.cpp), where
  // the slot's other keys (op, name, inputs, repeat, class) say what the slot is.
  bool in_slot = false;
};
const std::vector<BlockFieldKey>& block_field_keys();
// The keys of a block map (and of `defaults:`), and of a network map, in the table's order.
const std::vector<std::string>& block_fields();
const std::vector<std::string>& network_fields();
// The keys a sweep may set: every block's sweepable key, then the networks' that blocks lack.
const std::vector<std::string>& sweepable_fields();
// The block fields a slot may set, in the table's order.
const std::vector<std::string>& slot_fields();
bool is_block_sweepable(const std::string& key);
bool is_network_sweepable(const std::string& key);

using FieldLookup = std::function<std::optional<Field>(const std::string& key)>;

void read_layer_fields(const FieldLookup& find, BlockSpec& b);
void read_run_fields(const FieldLookup& find, BlockSpec& b);

}  // namespace convbench

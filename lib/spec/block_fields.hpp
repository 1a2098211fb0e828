#pragma once
// The fields a block and a network read the same way (configs/README.md "Spec format"): how its convs are
// normalised, activated and dropped out (bias, norm, norm_groups, act, negative_slope, dropout),
// and how it runs (dtype, precision, layout, mode, memory_policy). `find` gives a field's value at the
// current sweep point, or nothing when it is not set.
#include <functional>
#include <optional>
#include <string>

#include "spec/spec.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

using FieldLookup = std::function<std::optional<Field>(const std::string& key)>;

void read_layer_fields(const FieldLookup& find, BlockSpec& b);
void read_run_fields(const FieldLookup& find, BlockSpec& b);

}  // namespace convbench

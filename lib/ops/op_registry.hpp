// The registry of op definitions (op_definition.hpp): every op kind's definition, found by kind
// or by name. Each lib/ops/<op>.cpp defines its op; op_registry.cpp lists them once.
#pragma once

#include <string_view>
#include <vector>

#include "ops/op_definition.hpp"

namespace convbench {

// Every op kind has a definition (a test checks it); asking for one that has none is a bug.
const OpDefinition& op_definition(OpKind kind);
// nullptr for a name that is no op kind.
const OpDefinition* find_op_definition(std::string_view name);
// In OpKind order: the order messages list them in.
const std::vector<const OpDefinition*>& op_definitions();

// One function per op file, called once by the registry.
OpDefinition define_conv();
OpDefinition define_conv_transpose();
OpDefinition define_batch_norm();
OpDefinition define_group_norm();
OpDefinition define_relu();
OpDefinition define_leaky_relu();
OpDefinition define_dropout();
OpDefinition define_add();
OpDefinition define_sub();
OpDefinition define_concat();
OpDefinition define_max_pool();
OpDefinition define_avg_pool();
OpDefinition define_upsample();

}  // namespace convbench

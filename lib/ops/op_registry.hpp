// The registry of op definitions (op_definition.hpp): every op kind's definition, found by kind
// or by name. Each lib/ops/<op>.cpp defines its op; graph/op_kinds.def lists the kinds once.
#pragma once

#include <string_view>
#include <vector>

#include "ops/op_definition.hpp"

namespace convbench {

// Every op kind has a definition (a test checks it); asking for one that has none is a bug.
const OpDefinition& op_definition(OpKind kind);
// Its traits (every definition states them: the registry refuses one that does not).
const OpTraits& op_traits(OpKind kind);
// nullptr for a name that is no op kind.
const OpDefinition* find_op_definition(std::string_view name);
// The op the importer reads ONNX operator `node` as, one node to one op (OpDefinition::onnx_import);
// nullptr for an operator no definition names.
const OpDefinition* find_onnx_import(std::string_view node);
// In OpKind order: the order messages list them in.
const std::vector<const OpDefinition*>& op_definitions();

// One function per op kind (graph/op_kinds.def), defined in the op's file, called once by the
// registry: OpDefinition define_conv(); ...
#define CONVBENCH_OP_KIND(kind) OpDefinition define_##kind();
#include "graph/op_kinds.def"
#undef CONVBENCH_OP_KIND

}  // namespace convbench

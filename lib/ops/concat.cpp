// concat (along channels): two or more inputs; copies only, no FLOPs, nothing saved.
#include "ops/op_math.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_concat() {
  OpDefinition d;
  d.kind = OpKind::concat;
  d.min_inputs = 2;
  d.max_inputs = -1;
  d.work = [](const WorkQuery&) { return OpWork{}; };
  return d;
}

}  // namespace convbench

// Reads the variants of one (expanded) block, each as its kind's definition says
// (spec/block_kind.hpp): its parameters, and custom op graphs. Checks everything that the block's
// channels and sizes decide (divisibility by groups and ratios, channel counts along a custom
// graph, windows that fit, element counts that fit in int64), so that bad combinations are
// reported at the value in the file.
#pragma once

#include <vector>

#include "spec/spec.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

// `variants` is the block's (or defaults') variant list; every other field of `block` is
// already resolved. A variant whose file cannot be read (UnreadableFile) goes to `unreadable`.
struct ParsedVariants {
  std::vector<VariantSpec> variants;
  std::vector<UnreadableVariant> unreadable;
  std::string first;  // the name of the first variant in the file, read or not
};
ParsedVariants parse_variants(const Field& variants, const BlockSpec& block);

// Fills out.ops and out.output from a custom variant's map (keys already checked).
// Every op field that has a default is filled in: convs get out_channels (the input's), kernel
// (the block's), stride, dilation, padding ("same" resolved per dim), bias (the block's) and,
// for conv_transpose, output_padding; pools get kernel (2), stride (the kernel) and padding (0).
// groups "depthwise" is resolved to the op's input channels, which a spec always determines, so
// groups is never -1. Every op must contribute to the output.
void parse_custom_ops(const Field& variant, const BlockSpec& block, VariantSpec& out);

// `memory_policy: none | recompute | inplace_abn | inplace_act` of a block, network or variant,
// with where it was written (what it cannot apply to is refused there when the variant is built).
MemoryPolicyChoice read_memory_policy(const Field& f);
// `precision: plain | amp_float16 | amp_bfloat16` of a block, network or variant.
PrecisionChoice read_precision(const Field& f);

// One custom-op field read as its definition declares it (a wrong type or range fails at `f`);
// a network's op entries read theirs with it once their $params are substituted.
FieldValue read_op_field(const Field& f, const OpField& declared, int dims);

}  // namespace convbench

#include "pipeline/fold_facts.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/variant_analysis.hpp"
#include "ops/autograd_rules.hpp"
#include "ops/op_registry.hpp"
#include "pipeline/fold_proof.hpp"
#include "variants/folded_variant.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t trained_params(const Graph& g) {
  int64_t n = 0;
  for (const Param& p : g.params) n += p.desc.numel();
  return n;
}

// The weights that run: every param of the folded graph, except that a folded_conv runs its
// computed kernel and bias instead of its parameters (the source's branch weights).
int64_t running_params(const Graph& g) {
  int64_t n = 0;
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::folded_conv) {
      n += numel(std::vector<int64_t>{op.conv.out_channels, g.desc(op.inputs.at(0)).channels() / op.conv.groups}) *
               numel(op.conv.kernel) +
           (op.conv.bias ? op.conv.out_channels : 0);
      continue;
    }
    for (int p : op.params) n += g.params[static_cast<size_t>(p)].desc.numel();
  }
  return n;
}

// What a training step keeps for backward, by name: the distinct values recorded ops save (the
// block input left out: the caller holds it anyway, as the saved bytes leave it out), and each
// op's aux tensors (a folded_conv's kernel "<op>.kernel", batch norm's statistics, masks).
std::vector<std::string> saved_names(const Graph& g, bool training) {
  std::vector<std::string> names;
  if (!training) return names;
  const std::vector<bool> rg = g.requires_grad();
  std::set<int> values;
  for (const Op& op : g.ops) {
    if (!rg[static_cast<size_t>(op.output)]) continue;
    const SavedTensors s = saved_tensors(op, inputs_requiring_grad(op, rg));
    for (int pos : s.inputs) values.insert(op.inputs[static_cast<size_t>(pos)]);
    if (s.output) values.insert(op.output);
  }
  for (int v : values)
    if (v != g.input) names.push_back(g.values[static_cast<size_t>(v)].name);
  for (const Op& op : g.ops)
    if (rg[static_cast<size_t>(op.output)] && !aux_tensors(g, op).empty())
      names.push_back(op.name + (op.kind == OpKind::folded_conv ? ".kernel" : ".stats"));
  return names;
}

int64_t forward_macs(const Graph& g) {
  try {
    return analyze_variant(g, false).macs.forward;
  } catch (const std::exception&) {
    return INT64_MAX;
  }
}

// What the proof compares besides values: the folded graph's ops and their conv geometry.
std::string structure(const Graph& g) {
  std::string s;
  for (const Op& op : g.ops) {
    s += std::string(to_string(op.kind)) + " " + op.name;
    if (op.kind == OpKind::conv || op.kind == OpKind::folded_conv)
      s += " " + dims_string(op.conv.kernel) + "/" + dims_string(op.conv.stride) + "/" + dims_string(op.conv.padding) +
           "/" + dims_string(op.conv.dilation) + "/" + std::to_string(op.conv.groups) + (op.conv.bias ? "b" : "");
    s += "\n";
  }
  return s;
}

std::string sci(double v) {
  std::ostringstream o;
  o.precision(2);
  o << std::scientific << v;
  return o.str();
}

}  // namespace

FoldFacts fold_facts(const BlockSpec& spec_block, const VariantSpec& v) {
  const bool training = spec_block.mode == RunMode::train;
  // The fold composes the float32 graphs (variants/folded_variant.cpp); an AMP precision applies
  // to what it gives, so the facts and the proof are those of the plain graphs.
  BlockSpec block = spec_block;
  block.precision = PrecisionChoice{};
  VariantSpec source_spec = fold_source(spec_block, v);
  source_spec.precision.reset();
  const Graph source = build_variant_graph(block, source_spec);
  const FoldResult folded = build_folded_variant(block, v);
  FoldFacts f;
  f.source = v.of;
  f.fold = v.fold;
  f.trained_params = trained_params(source);
  f.kernel_params = running_params(folded.graph);
  f.source_ops = static_cast<int64_t>(source.ops.size());
  f.ops = static_cast<int64_t>(folded.graph.ops.size());
  f.source_saved = saved_names(source, training);
  f.saved = saved_names(folded.graph, training);
  f.kept = folded.kept;
  for (const FoldedConv& c : folded.convs)
    f.convs.push_back({c.name, c.ops, c.attrs.kernel, c.attrs.stride, c.attrs.padding, c.attrs.dilation, c.attrs.groups,
                       c.attrs.bias, c.kernel_macs});

  // The proof, in float64 on the reference backend: at the real shape when cheap, else reduced.
  BlockSpec exact = block;
  exact.dtype = DType::float64;
  BlockSpec proof_block = exact;
  if (forward_macs(source) > kFullShapeProofMacs) {
    BlockSpec reduced = exact;
    reduced.batch = std::min<int64_t>(block.batch, 2);
    for (int64_t& s : reduced.size) s = std::min<int64_t>(s, 16);
    try {
      if (structure(build_folded_variant(reduced, v).graph) == structure(folded.graph)) {
        proof_block = reduced;
        f.proof_reduced = true;
      }
    } catch (const std::exception&) {
      // the reduced block is no valid block of this variant: prove at the real shape
    }
  }
  const Graph source64 = build_variant_graph(proof_block, source_spec);
  const Graph folded64 = build_folded_variant(proof_block, v).graph;
  const FoldProof proof = prove_fold(source64, folded64, training);
  f.output_error = proof.output_error;
  f.gradient_error = proof.gradient_error;
  f.proof_shape = source64.desc(source64.input).shape;
  if (!(proof.max_error() <= kFoldTolerance))
    throw std::runtime_error(
        block.key_path + "/" + v.name + ": the folded graph does not compute what \"" + v.of +
        "\" computes: max relative error " + sci(proof.output_error) + " (output)" +
        (proof.gradient_error >= 0 ? ", " + sci(proof.gradient_error) + " (parameter gradients)" : std::string()) +
        " on the reference backend in float64 at " + dims_string(f.proof_shape) + ", above the tolerance " +
        sci(kFoldTolerance) + ". This is a bug in convbench's folding.");
  return f;
}

}  // namespace convbench

// One block kind's definition (a variant's `kind`: configs/README.md "Variants"), in one file per
// kind (lib/spec/kind_<kind>.cpp), as OpDefinition is for ops: the keys its variants take, how
// they are read (defaults, located errors), how they must fit a block's channels, what the
// resolved spec lists of them, its line in `convbench list`, and its op sequence.
//
// The registry (block_kind_registry.hpp) maps name -> definition. The block and network parsers,
// the variant and network builders (lib/variants), the resolved spec and `convbench list` consult
// it instead of lists and switches of their own. It lives in spec, the lowest layer that can read
// a variant: the parsers below variants must ask it, and the op sequence needs nothing above spec
// (GraphBuilder from ops, BlockAssembler beside it). What needs the layers above is machinery
// the definition names, not kind code: folding (`folds_another`) and the memory policies.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/graph_builder.hpp"
#include "spec/block_assembler.hpp"
#include "spec/spec.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

// Where a kind's fit check points when a parameter does not fit. In a block: at the parameter
// (where the file wrote it, else the variant under the parameter's key path). In a network: at
// the slot's out_channels, naming the slot and the variant that fills it, because the same
// variant fits some slots and not others.
class FitSite {
 public:
  virtual ~FitSite() = default;
  // Whether the variant wrote `key` (a message then says when a default is at fault).
  virtual bool given(const std::string& key) const = 0;
  // `key`: the parameter at fault, or "" for the variant as a whole.
  [[noreturn]] virtual void fail(const std::string& key, const std::string& message) const = 0;
};

// A parameter a kind cannot do without, and how a variant that names the bare kind should be
// written instead: {"groups", "{kind: grouped, groups: N}"}.
struct RequiredParameter {
  std::string key;
  std::string written_as;
};

struct BlockKindDefinition {
  std::string_view name;  // filled in by the registry from block_kinds.def: "bottleneck"

  // --- `convbench list` (configs/README.md "Variants" says the same in its table) ---
  std::string parameters_doc;  // "ratio (4), groups (1)"
  std::string ops_doc;         // "CNA(1x1, in->mid=out/ratio) -> ..."

  // --- the spec ---
  // The keys a variant map of this kind may have besides kind, name and memory_policy (and fills,
  // in a network), in the order messages list them. A kind with parameters of its own keeps them
  // in a struct of its own file, stored in VariantSpec::kind_parameters (kind_parameters<T> below).
  std::vector<std::string> keys;
  std::optional<RequiredParameter> required;
  // Why a network does not take this kind (empty: networks take it; `fit` then runs per slot).
  std::string not_in_networks;
  // Reads the kind's parameters into `out`, with their defaults and range checks. `variant` is a
  // map whose keys are checked, or the bare kind name (then nothing is written, and every
  // parameter takes its default). `block`: the block (every field resolved); nullptr in a network,
  // whose slots differ in channels. Empty: the kind has no parameters.
  std::function<void(const Field& variant, const BlockSpec* block, VariantSpec& out)> read;
  // Checks the parameters against the channels and sizes of a block, or of a network's slot:
  // divisibility by groups and ratios, widths and tensors that fit. Asked after `read` in a
  // block, and for every slot the variant fills in a network. Empty: any block fits.
  std::function<void(const VariantSpec& v, const BlockSpec& block, const FitSite& at)> fit;
  // Writes the parameters, defaults applied, into the resolved spec's entry for the variant (after
  // its kind and name). `graph` gives a block variant's graph as the variant builder makes it
  // before any memory policy; it is empty in a network. Empty function: no parameters.
  std::function<void(const VariantSpec& v, const std::function<Graph()>& graph, nlohmann::ordered_json& out)> resolved;

  // --- the graph: one of the three ---
  // The main path from the block input `x`, with the assembler's units (named under its prefix:
  // a network's slot gives one); the block (or slot) then adds its dropout and residual shortcut.
  std::function<int(BlockAssembler& a, const VariantSpec& v, int x)> main_path;
  // The variant's own ops are the whole block (custom): the block's dropout and residual do not
  // apply. In a network they replace the slot's conv (variants/network_builder.cpp reads them).
  std::function<int(GraphBuilder& b, const BlockSpec& block, const VariantSpec& v, int x)> block_ops;
  // The variant is another variant of its block (`of`), folded: its graph is that variant's,
  // rewritten by transforms/fold_graph.hpp (variants/folded_variant.hpp) and proven equal to it
  // before any row; spec_filter keeps the source, `analyze` reports the fold.
  bool folds_another = false;
  // main_path is the whole block, its own shortcut included (torchvision's blocks: the identity
  // added where the stride is 1 and the channels match): the block's dropout and residual do not
  // apply to it.
  bool own_shortcut = false;

  // --- the spec's size check (spec_loader.cpp), made on the file before anything is built ---
  // The most ops a variant of this kind puts in one block: its main path with every optional part
  // present, the block's dropout and shortcut, and the two layout conversions at the block's
  // boundary; not the casts that mixed precision adds. `variant` is its entry as written (a map,
  // or the bare kind name): branches reads its count, custom its ops. Required, but for folded
  // (counted as the variant it folds, which has at least as many ops) and onnx (counted as one:
  // its file is read later, and onnx_model.cpp caps its nodes). BlockKinds.CountedOpsBoundTheGraph
  // checks the bound against every kind's graphs.
  std::function<int64_t(const Field& variant)> counted_ops;
};

// A kind whose variants have at most `n` ops whatever their parameters.
inline std::function<int64_t(const Field&)> ops_at_most(int64_t n) {
  return [n](const Field&) { return n; };
}

// A kind's own parameters (VariantSpec::kind_parameters), or their defaults for a variant that
// named the bare kind.
template <typename Parameters>
Parameters kind_parameters(const VariantSpec& v) {
  if (!v.kind_parameters.has_value()) return Parameters{};
  return std::any_cast<Parameters>(v.kind_parameters);
}

}  // namespace convbench

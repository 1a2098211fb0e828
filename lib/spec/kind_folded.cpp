// folded: another variant of the block (`of`), with every linear region folded into one conv,
// computed once when the graph is built (`fold: once`, inference) or from the source's weights in
// every step (`online`). Its graph is made by the fold machinery (lib/transforms, variants/
// folded_variant.hpp); the parser checks that `of` names an unfolded variant of the block.
#include "spec/block_kind_registry.hpp"

namespace convbench {

BlockKindDefinition define_folded_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "of (required), fold (once in infer blocks, online in train blocks)";
  d.ops_doc =
      "the variant `of` with every linear region (convs, batch norm in inference, add, sub, concat, slice) "
      "folded into one conv: computed once at build time, or from the branch weights in every step (online)";
  d.keys = {"of", "fold"};
  d.required = RequiredParameter{"of", "{kind: folded, of: VARIANT}"};
  d.not_in_networks =
      "a folded variant folds one block's graph; networks do not take folded variants (fold the block in "
      "`blocks:`, where the proof and the comparison with its source run)";
  // By default once in an infer block and online in a train block.
  d.read = [](const Field& v, const BlockSpec* block, VariantSpec& out) {
    const auto of = v.get("of");
    if (!of) v.fail_missing("of", " (the name of the variant of this block to fold)");
    out.of = of->as_string();
    const bool train = block->mode == RunMode::train;
    out.fold = train ? "online" : "once";
    if (const auto fold = v.get("fold")) {
      out.fold = fold->as_choice({"once", "online"}, "fold");
      if (out.fold == "once" && train)
        fold->fail(
            "fold: once computes the kernel once, when the graph is built: a kernel computed once cannot be trained "
            "as its source's weights are (use fold: online, which computes it from them in every step, or mode: "
            "infer)");
    }
    if (!v.get("name")) out.name = (out.fold == "once" ? "folded-" : "online-") + out.of;
  };
  // What the folded graph is (its ops, which source ops each conv replaces, why the others stay)
  // follows from the fold: variants/resolved_spec.cpp adds it.
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>&, nlohmann::ordered_json& out) {
    out["of"] = v.of;
    out["fold"] = v.fold;
  };
  d.folds_another = true;
  return d;
}

}  // namespace convbench

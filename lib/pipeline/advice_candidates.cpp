#include "pipeline/advice_candidates.hpp"

#include <algorithm>
#include <functional>

#include "spec/block_kind_registry.hpp"
#include "variants/graph_hash.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

bool swept(const BlockSpec& block, const std::string& field) {
  for (const auto& [key, value] : block.point)
    if (key == field) return true;
  return false;
}

// Adds the candidate when its graph builds and differs from the original's (a change that builds
// the same graph would measure the original twice), else says why in not_tried.
void add_if_it_builds(AdviceCandidates& out, AdviceCandidate c,
                      const std::function<void(AdviceCandidate&, const Graph&)>& with_graph = {}) {
  try {
    const Graph g = build_variant_graph(c.block, c.block.variants[c.variant]);
    if (graph_hash(g, c.block.mode == RunMode::train) == out.original_graph_hash) {
      out.not_tried.emplace_back(c.change, "it builds the same graph as the variant as written");
      return;
    }
    if (with_graph) with_graph(c, g);
    out.tries.push_back(std::move(c));
  } catch (const InputError& e) {
    out.not_tried.emplace_back(c.change, e.message());
  }
}

// A field the spec sweeps is left to the sweep (compare shows every value); true when it is.
bool left_to_the_sweep(AdviceCandidates& out, const BlockSpec& block, const std::string& field) {
  if (!swept(block, field)) return false;
  out.not_tried.emplace_back(field, "the spec sweeps it (compare shows every value)");
  return true;
}

// The user's variant with `field: value` written on it; the caller sets the field in c.block.
AdviceCandidate variant_field_change(const AdviceCandidate& original, const std::string& field,
                                     const std::string& value) {
  AdviceCandidate c = original;
  c.category = field;
  c.change = field + ": " + value;
  c.where = original.block.variants[original.variant].key_path;
  c.lines = {c.change};
  return c;
}

void add_memory_policies(AdviceCandidates& out, const AdviceCandidate& original) {
  const BlockSpec& block = original.block;
  const VariantSpec& variant = block.variants[original.variant];
  if (left_to_the_sweep(out, block, "memory_policy")) return;
  const MemoryPolicy current = memory_policy_of(block, variant).policy;
  for (const std::string& name : memory_policy_names()) {
    const MemoryPolicy policy = *parse_memory_policy(name);
    if (policy == current) continue;
    AdviceCandidate c = variant_field_change(original, "memory_policy", name);
    c.block.variants[c.variant].memory_policy =
        MemoryPolicyChoice{policy, variant.key_path + ".memory_policy", variant.where};
    add_if_it_builds(out, std::move(c), [](AdviceCandidate& built, const Graph& g) { built.note = g.policy_note; });
  }
}

void add_layouts(AdviceCandidates& out, const AdviceCandidate& original) {
  const BlockSpec& block = original.block;
  if (swept(block, "layout") || swept(block, "layout_conversion")) {
    out.not_tried.emplace_back("layout", "the spec sweeps it (compare shows the layout table)");
    return;
  }
  struct Choice {
    Layout layout;
    LayoutConversion conversion;
    const char* note;
  };
  const Choice choices[] = {
      {Layout::channels_first, LayoutConversion::none, ""},
      {Layout::channels_last, LayoutConversion::none, "the network around the block is channels-last too"},
      {Layout::channels_last, LayoutConversion::boundary,
       "the network around stays channels-first: the step converts the block's input and output"},
  };
  const bool boundary_now = converts_at_boundary(block);
  for (const Choice& choice : choices) {
    const bool boundary = choice.conversion == LayoutConversion::boundary;
    if (choice.layout == block.layout && boundary == boundary_now) continue;
    if (boundary && block.network) {
      out.not_tried.emplace_back("layout: channels_last (boundary)",
                                 "a network is the whole model: it has no boundary to convert at");
      continue;
    }
    AdviceCandidate c = original;
    c.category = "layout";
    c.block.layout = choice.layout;
    c.block.layout_conversion = choice.conversion;
    c.change = "layout: " + std::string(to_string(choice.layout)) + (boundary ? " (boundary)" : "");
    c.where = block.key_path;
    c.lines = {"layout: " + std::string(to_string(choice.layout))};
    // The conversion is only written where it differs from what the block has.
    if (choice.layout == Layout::channels_last && choice.conversion != block.layout_conversion)
      c.lines.push_back("layout_conversion: " + std::string(to_string(choice.conversion)));
    c.note = choice.note;
    add_if_it_builds(out, std::move(c));
  }
}

void add_fold(AdviceCandidates& out, const AdviceCandidate& original) {
  const BlockSpec& block = original.block;
  const VariantSpec& variant = block.variants[original.variant];
  if (folds_another(variant)) return;  // the user's variant is a fold already
  const bool train = block.mode == RunMode::train;
  const std::string change = train ? "fold: online" : "fold: once";
  if (block.network) {
    out.not_tried.emplace_back(change, "networks do not take folded variants (fold the block in a block spec)");
    return;
  }
  AdviceCandidate c = original;
  c.category = "fold";
  c.change = change;
  VariantSpec folded;
  folded.kind = "folded";
  folded.of = variant.name;
  folded.fold = train ? "online" : "once";
  // A name no variant of the block has, so that the fold's rows and messages are its own.
  folded.name = (train ? "online-" : "folded-") + variant.name;
  const auto taken = [&](const std::string& name) {
    return std::any_of(block.variants.begin(), block.variants.end(),
                       [&](const VariantSpec& v) { return v.name == name; });
  };
  for (int k = 2; taken(folded.name); ++k)
    folded.name = (train ? "online-" : "folded-") + variant.name + "-" + std::to_string(k);
  folded.key_path = block.key_path + ".variants[" + std::to_string(block.variants.size()) + "]";
  folded.where = variant.where;
  c.block.variants.push_back(folded);
  c.variant = c.block.variants.size() - 1;
  c.where = block.key_path + ".variants";
  c.lines = {"- {kind: folded, of: " + variant.name + "}"};
  c.note = train ? "trains the source's weights and runs one conv per linear region, its kernel computed in every step"
                 : "runs one conv per linear region, its kernel computed once when the graph is built";
  add_if_it_builds(out, std::move(c));
}

// Mixed precision as PyTorch users train (configs/README.md "Mixed precision"): each precision the
// variant does not run in, written on the variant. A block with a dtype refuses AMP at its key; a
// variant with an op autocast has no rule for refuses it too; both are said with the reason.
void add_precisions(AdviceCandidates& out, const AdviceCandidate& original) {
  const BlockSpec& block = original.block;
  const VariantSpec& variant = block.variants[original.variant];
  if (left_to_the_sweep(out, block, "precision")) return;
  const Precision current = precision_of(block, variant).precision;
  for (const Precision p : {Precision::plain, Precision::amp_bfloat16, Precision::amp_float16}) {
    if (p == current) continue;
    AdviceCandidate c = variant_field_change(original, "precision", std::string(to_string(p)));
    c.block.variants[c.variant].precision = PrecisionChoice{p, variant.key_path + ".precision", variant.where};
    c.note = p == Precision::plain ? "every tensor in the block's dtype"
             : p == Precision::amp_float16
                 ? "runs as torch.autocast(float16) with GradScaler does: float32 weights, the loss scaled"
                 : "runs as torch.autocast(bfloat16) does: float32 weights";
    add_if_it_builds(out, std::move(c));
  }
}

void add_threads(AdviceCandidates& out, const AdviceCandidate& original, const std::vector<int>& choices) {
  for (int threads : choices) {
    AdviceCandidate c = original;
    c.category = "threads";
    c.change = "--threads " + std::to_string(threads);
    c.where = "command line";
    c.lines = {"--threads " + std::to_string(threads)};
    c.threads = threads;
    out.tries.push_back(std::move(c));
  }
}

}  // namespace

std::vector<int> thread_choices(int threads, int cpus) {
  std::vector<int> out;
  for (int t : {1, cpus / 2, cpus - 1, cpus})
    if (t >= 1 && t != threads && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  return out;
}

AdviceCandidates advice_candidates(const BlockSpec& block, size_t variant, int threads,
                                   const std::vector<int>& thread_choices) {
  AdviceCandidates out;
  out.original.change = "as written";
  out.original.category = "original";
  out.original.block = block;
  out.original.variant = variant;
  out.original.threads = threads;
  out.original_graph_hash =
      graph_hash(build_variant_graph(block, block.variants[variant]), block.mode == RunMode::train);
  add_memory_policies(out, out.original);
  add_layouts(out, out.original);
  add_fold(out, out.original);
  add_precisions(out, out.original);
  add_threads(out, out.original, thread_choices);
  return out;
}

}  // namespace convbench

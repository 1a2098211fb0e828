// branches (seed 003): `count` convs side by side ("branches.<i>", the block's kernel, stride,
// padding, dilation and bias, out_channels each), each reading its channel slice of the input
// ("split.<i>", split: channels) or the whole input (split: none), concatenated ("cat"), then one
// norm and act on the concatenation (the same as a norm and act per branch: both work per channel).
#include <charconv>
#include <string>
#include <system_error>

#include "spec/kind_branches.hpp"

#include "spec/block_kind_registry.hpp"

namespace convbench {

BlockKindDefinition define_branches_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "count (required), split (channels | none), out_channels (out/count)";
  d.ops_doc = "count x [slice (split: channels) -> conv k, in/count or in -> out/count], concat -> norm -> act";
  d.keys = {"count", "split", "out_channels"};
  d.required = RequiredParameter{"count", "{kind: branches, count: N}"};
  d.not_in_networks = "branches is a block kind; networks do not take it (use it in `blocks:`)";
  d.read = [](const Field& v, const BlockSpec* block, VariantSpec& out) {
    const auto count = v.get("count");
    if (!count) v.fail_missing("count", " (the number of branches)");
    BranchesParameters p;
    p.count = count->as_int(2);
    if (const auto split = v.get("split"))
      p.split_channels = split->as_choice({"channels", "none"}, "split") == "channels";
    // Each branch's share of the block's out_channels by default; `fit` checks that it divides.
    p.branch_out_channels = v.get("out_channels") ? v.get("out_channels")->as_int(1) : block->out_channels / p.count;
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& variant, const BlockSpec& block, const FitSite& at) {
    const auto v = kind_parameters<BranchesParameters>(variant);
    if (v.split_channels && block.in_channels % v.count != 0)
      at.fail("count", "split: channels gives each branch in_channels / count channels: in_channels " +
                           std::to_string(block.in_channels) + " is not divisible by count " + std::to_string(v.count) +
                           " (or use split: none)");
    if (at.given("out_channels")) {
      if (v.branch_out_channels * v.count != block.out_channels)
        at.fail("out_channels", "count " + std::to_string(v.count) + " branches of " +
                                    std::to_string(v.branch_out_channels) + " channels give " +
                                    std::to_string(v.branch_out_channels * v.count) + ", the block's out_channels is " +
                                    std::to_string(block.out_channels));
    } else if (block.out_channels % v.count != 0) {
      at.fail("count", "the block's out_channels " + std::to_string(block.out_channels) +
                           " is not divisible by count " + std::to_string(v.count) +
                           " (each branch gives out_channels / count)");
    }
  };
  d.resolved = [](const VariantSpec& variant, const std::function<Graph()>&, nlohmann::ordered_json& out) {
    const auto v = kind_parameters<BranchesParameters>(variant);
    out["count"] = v.count;
    out["split"] = v.split_channels ? "channels" : "none";
    out["out_channels"] = v.branch_out_channels;
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& variant, int x) {
    const auto v = kind_parameters<BranchesParameters>(variant);
    const BlockSpec& block = a.block();
    GraphBuilder& b = a.builder();
    ConvAttrs conv;
    conv.out_channels = v.branch_out_channels;
    conv.kernel = block.kernel;
    conv.padding = block.padding;
    conv.dilation = block.dilation;
    conv.stride = block.stride;
    conv.bias = block.bias;
    const int64_t part = block.in_channels / v.count;
    std::vector<int> outs;
    for (int64_t i = 0; i < v.count; ++i) {
      const std::string index = std::to_string(i);
      int in = x;
      if (v.split_channels) {
        Op s;
        s.kind = OpKind::slice;
        s.name = a.name("split." + index);
        s.inputs = {x};
        s.slice = {i * part, part};
        in = b.add(std::move(s));
      }
      outs.push_back(b.conv(a.name("branches." + index), in, conv));
    }
    return a.norm_act("", b.concat(a.name("cat"), outs));
  };
  // count slices and convs, concat, norm, act, dropout, the shortcut's conv, norm and add, and the
  // two conversions. A count that is no integer in 1 .. kMaxSpecDim is refused when the variant is
  // read (as_int above), so it counts nothing here.
  d.counted_ops = [](const Field& v) -> int64_t {
    const auto count = v.get("count");
    if (!count || scalar_type(count->node()) != ScalarType::integer) return 0;
    const std::string& text = count->node().text;
    int64_t n = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (error != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxSpecDim) return 0;
    return 2 * n + 9;
  };
  return d;
}

}  // namespace convbench

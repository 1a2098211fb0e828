// densenet_layer: DenseNet's layer (torchvision's densenet.py _DenseLayer) with its input
// concatenated after it, as its dense block does: batch norm and ReLU on the input ("norm1",
// "relu1"), a 1x1 conv to bn_size x growth ("conv1"), batch norm and ReLU ("norm2", "relu2"), the
// block's kernel to growth = out_channels - in_channels ("conv2"), and the input and the new
// features concatenated ("cat"). Pre-activation: the convs have no bias and no norm after them.
#include "spec/block_kind_checks.hpp"
#include "spec/block_kind_registry.hpp"
#include "spec/torchvision_parts.hpp"

namespace convbench {
namespace {

struct DensenetLayerParameters {
  int64_t bn_size = 4;  // torchvision's: the bottleneck is bn_size x growth wide
};

}  // namespace

BlockKindDefinition define_densenet_layer_kind() {
  BlockKindDefinition d;
  d.parameters_doc = "bn_size (4); growth = out - in";
  d.ops_doc = "BN -> relu -> conv(1x1, in->bn_size x growth) -> BN -> relu -> conv(k, ->growth), concat(input, it)";
  d.keys = {"bn_size"};
  d.not_in_networks =
      "densenet_layer is a whole block that concatenates its input; a network writes it as a unit "
      "of ops";
  d.own_shortcut = true;
  d.read = [](const Field& v, const BlockSpec*, VariantSpec& out) {
    DensenetLayerParameters p;
    if (!v.is_map()) return;
    if (auto f = v.get("bn_size")) p.bn_size = f->as_int(1, 64);
    out.kind_parameters = p;
  };
  d.fit = [](const VariantSpec& v, const BlockSpec& block, const FitSite& at) {
    const bool unit_stride = has_unit_stride(block);
    if (block.out_channels <= block.in_channels || !unit_stride)
      at.fail("",
              "a DenseNet layer adds growth = out_channels - in_channels new channels to its input at stride 1; "
              "this block goes " +
                  std::to_string(block.in_channels) + " -> " + std::to_string(block.out_channels) + " channels" +
                  (unit_stride ? "" : " with a stride"));
    const auto p = kind_parameters<DensenetLayerParameters>(v);
    fit_elements(block, at, "bn_size", p.bn_size * (block.out_channels - block.in_channels), "bottleneck's output");
  };
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>&, nlohmann::ordered_json& out) {
    out["bn_size"] = kind_parameters<DensenetLayerParameters>(v).bn_size;
  };
  d.main_path = [](BlockAssembler& a, const VariantSpec& v, int x) {
    const auto p = kind_parameters<DensenetLayerParameters>(v);
    TorchvisionParts t(a);
    GraphBuilder& b = t.builder();
    const BlockSpec& block = t.block();
    const int64_t growth = block.out_channels - block.in_channels;
    const std::vector<int64_t> one(static_cast<size_t>(block.dims), 1);
    int y = b.relu(t.name("relu1"), b.batch_norm(t.name("norm1"), x));
    ConvAttrs c1{.out_channels = p.bn_size * growth,
                 .kernel = one,
                 .stride = one,
                 .padding = std::vector<int64_t>(static_cast<size_t>(block.dims), 0),
                 .dilation = one,
                 .output_padding = {},
                 .groups = 1,
                 .bias = false};
    y = b.conv(t.name("conv1"), y, c1);
    y = b.relu(t.name("relu2"), b.batch_norm(t.name("norm2"), y));
    ConvAttrs c2 = c1;
    c2.out_channels = growth;
    c2.kernel = block.kernel;
    c2.padding = block.padding;
    c2.dilation = block.dilation;
    y = b.conv(t.name("conv2"), y, c2);
    return b.concat(t.name("cat"), {x, y});
  };
  d.counted_ops = ops_at_most(9);
  return d;
}

}  // namespace convbench

// onnx: a block the user holds as an ONNX file (`file`, found from the spec's folder), typically
// PyTorch's torch.onnx.export of their module: its nodes, translated into convbench's ops
// (lib/onnx), are the whole block, as a custom variant's ops are. The block's input shape and
// dtype come from the spec; the file's input must agree with them where it gives a size.
#include <filesystem>

#include "spec/block_kind_registry.hpp"
#include "spec/custom_op_graph.hpp"
#include "util/markup_escape.hpp"

#ifdef CONVBENCH_WITH_ONNX
#include "onnx/onnx_model.hpp"
#include "util/join.hpp"
#endif

namespace convbench {
namespace {

#ifdef CONVBENCH_WITH_ONNX
// The spec's sizes against the file's input (N, C, spatial), where the file gives them.
void check_input_shape(const OnnxBlock& model, const BlockSpec& block, const Field& file) {
  const auto& s = model.input_shape;
  if (static_cast<int>(s.size()) != block.dims + 2)
    file.fail("the model's input has " + std::to_string(s.size() - 2) + " spatial dim(s), the block " +
              std::to_string(block.dims));
  auto agree = [&](size_t i, int64_t want, const std::string& what) {
    if (s[i] && *s[i] != want)
      file.fail("the model's input " + what + " is " + std::to_string(*s[i]) + ", the block's " + std::to_string(want) +
                " (leave it symbolic in the export to take any)");
  };
  agree(0, block.batch, "batch");
  agree(1, block.in_channels, "channels");
  for (int d = 0; d < block.dims; ++d) agree(static_cast<size_t>(2 + d), block.size[static_cast<size_t>(d)], "size");
}

// The file's nodes as the variant's ops, checked against the block.
void read_model(const std::filesystem::path& path, const BlockSpec& block, const Field& file, const Field& v,
                VariantSpec& out) {
  const OnnxBlock model = read_onnx_block(path.string(), {.allow_links = out.allow_links});
  check_input_shape(model, block, file);
  if (block.mode == RunMode::train && !model.folded_norms.empty())
    file.fail("the exporter folded " + std::to_string(model.folded_norms.size()) + " batch norm(s) into the conv " +
              "before each (" + join(model.folded_norms, ", ") +
              ": onnxscript's FuseBatchNormIntoConv, which torch.onnx.export's default optimizer runs even on a "
              "module in training, or the TorchScript exporter's constant folding of a module in eval mode), so "
              "the file has no batch norm to train: measure it with mode: infer, or export a trainable file with "
              "torch.onnx.export(model, (x,), f, dynamo=False, training=torch.onnx.TrainingMode.TRAINING, "
              "do_constant_folding=False)");
  if (model.output_channels && *model.output_channels != block.out_channels)
    file.fail("the model's output has " + std::to_string(*model.output_channels) +
              " channels, the block's out_channels " + std::to_string(block.out_channels));
  out.file = path.string();
  out.file_sha256 = model.sha256;
  out.onnx_producer = model.producer;
  out.onnx_opset = model.opset;
  for (const ImportedOp& op : model.ops)
    out.ops.push_back({op.op, op.name, op.inputs, op.fields, v.path() + ".file: " + op.node, file.where(), op.values});
  out.output = model.output;
  if (!v.get("name")) out.name = "onnx";
}
#endif

}  // namespace

BlockKindDefinition define_onnx_kind() {
  BlockKindDefinition d;
  d.parameters_doc =
      "file (required): an ONNX model of the whole block; allow_links (default false): follow symbolic links to "
      "its external data";
#ifdef CONVBENCH_WITH_ONNX
  d.ops_doc = "the file's nodes as convbench ops; ONNX operators: " + join(supported_onnx_operators(), ", ");
#else
  d.ops_doc = "the file's nodes as convbench ops (this convbench was built without ONNX)";
#endif
  d.keys = {"file", "allow_links"};
  d.required = RequiredParameter{"file", "{kind: onnx, name: mine, file: block.onnx}"};
  d.not_in_networks = "an ONNX file is a whole block: give it its own entry under `blocks:`";
  d.read = [](const Field& v, const BlockSpec* block, VariantSpec& out) {
    const auto file = v.get("file");
    if (!file) v.fail_missing("file", " (the ONNX model of the block)");
#ifndef CONVBENCH_WITH_ONNX
    (void)block;  // read only where ONNX is built in
    (void)out;
    file->fail("this convbench was built without ONNX (CMake CONVBENCH_ONNX=OFF): build it with libonnx-dev");
#else
    // Relative to the spec's folder, as a user writes it beside the spec.
    std::filesystem::path path(file->as_string());
    const std::string spec_file = v.where().file;
    if (path.is_relative() && spec_file != "-" && !spec_file.empty())
      path = std::filesystem::path(spec_file).parent_path() / path;
    if (const auto links = v.get("allow_links")) out.allow_links = links->as_bool();
    // From here on what fails is the file (or its fit to the block), not the spec: the variant
    // becomes a row with status unreadable and the block's other variants still run.
    try {
      read_model(path, *block, *file, v, out);
    } catch (const UnreadableFile&) {
      throw;
    } catch (const InputError& e) {
      throw UnreadableFile(e);
    }
#endif
  };
  d.resolved = [](const VariantSpec& v, const std::function<Graph()>& graph, nlohmann::ordered_json& out) {
    out["file"] = v.file;
    out["file_sha256"] = v.file_sha256;
    out["producer"] = v.onnx_producer;
    out["opset"] = v.onnx_opset;
    out["allow_links"] = v.allow_links;
    if (graph) write_resolved_custom_ops(v, graph(), out);
  };
  d.block_ops = build_custom_ops;
  // Its file is read after this count, and onnx_model.cpp caps its nodes (kMaxOnnxNodes).
  d.counted_ops = ops_at_most(1);
  return d;
}

}  // namespace convbench

#include "pipeline/analyze.hpp"

#include <spdlog/spdlog.h>

#include <memory>
#include <stdexcept>

#include "backends/backend_registry.hpp"
#include "graph/checked_math.hpp"
#include "graph/graph_outline.hpp"
#include "measure/provenance.hpp"
#include "pipeline/fold_facts.hpp"
#include "spec/block_kind_registry.hpp"
#include "util/markup_escape.hpp"
#include "variants/graph_hash.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

MemoryFigures figures_from(const MemoryPrediction& p) {
  MemoryFigures m;
  m.peak_bytes = p.peak_bytes;
  m.at_peak = p.at_peak;
  m.peak_by_category = p.peak_by_category;
  m.saved_bytes = p.saved_bytes;
  m.saved_tensors = 0;
  for (const SavedTensorFacts& f : p.saved) m.saved_tensors += f.counted ? 1 : 0;
  return m;
}

WorkspaceQuery backend_workspace(Backend& backend, const Graph& graph, bool training) {
  for (const Op& op : graph.ops)
    if (backend.unsupported(graph, op)) return nullptr;
  return
      [&backend, &graph, training](const Op& op, Phase ph) { return backend.workspace_bytes(graph, op, ph, training); };
}

StatisticsQuery backend_statistics(const Backend& backend, const Graph& graph) {
  return [&backend, &graph](int index) { return backend.fills_statistics_of(graph, index); };
}

ResultRow analysis_row(const BlockSpec& block, const VariantSpec& variant, const Graph& graph,
                       const VariantAnalysis& a) {
  ResultRow r;
  r.block = block.name;
  r.variant = variant.name;
  r.kind = variant.kind;
  if (block.network) r.subject = "network";
  r.point = block.point;
  r.point_label = point_label(block);
  r.is_baseline = variant.name == block.baseline;
  r.dims = block.dims;
  r.dtype = std::string(to_string(block.dtype));
  r.layout = std::string(to_string(block.layout));
  r.layout_conversion =
      std::string(to_string(converts_at_boundary(block) ? LayoutConversion::boundary : LayoutConversion::none));
  r.mode = std::string(to_string(block.mode));
  r.input_shape = graph.desc(graph.input).shape;
  r.output_shape = graph.desc(graph.output).shape;
  r.kernel = block.kernel;
  r.graph_hash = graph_hash(graph, block.mode == RunMode::train);
  if (!block.network) r.structure = graph_outline(graph);
  r.memory_policy = std::string(to_string(graph.memory_policy));
  r.precision = std::string(to_string(graph.precision));
  r.policy_note = graph.policy_note;
  if (graph.memory_policy != MemoryPolicy::none)
    r.plain_graph_hash = graph_hash(build_plain_variant_graph(block, variant), block.mode == RunMode::train);
  r.params = a.params;
  r.buffers = a.buffers;
  r.buffer_counters = a.buffer_counters;
  r.macs = a.macs;
  r.flops = a.flops;
  r.bytes_forward = a.bytes_forward;
  r.bytes_backward = a.bytes_backward;
  r.predicted = figures_from(a.memory);
  return r;
}

ResultRow unreadable_row(const BlockSpec& block, const UnreadableVariant& variant) {
  ResultRow r;
  r.block = block.name;
  r.variant = variant.name;
  r.kind = variant.kind;
  if (block.network) r.subject = "network";
  r.point = block.point;
  r.point_label = point_label(block);
  r.dims = block.dims;
  r.dtype = std::string(to_string(block.dtype));
  r.layout = std::string(to_string(block.layout));
  r.mode = std::string(to_string(block.mode));
  r.input_shape = {block.batch, block.in_channels};
  r.input_shape.insert(r.input_shape.end(), block.size.begin(), block.size.end());
  r.kernel = block.kernel;
  r.status = RunStatus::unreadable;
  r.message = variant.error.what();
  return r;
}

ResultSet analyze_spec(const Spec& spec) {
  ResultSet set;
  for (const BlockSpec& block : spec.blocks) {
    for (const VariantSpec& v : block.variants) {
      const Graph g = build_variant_graph(block, v);
      try {
        set.rows.push_back(analysis_row(block, v, g, analyze_variant(g, block.mode == RunMode::train)));
      } catch (const CountOverflow& e) {
        throw InputError(v.where, v.key_path, std::string(e.what()) + " (sizes too large)");
      }
      // A folded variant is proven equal to its source before it becomes a row.
      if (folds_another(v)) set.rows.back().fold = fold_facts(block, v);
    }
  }
  for (const BlockSpec& block : spec.blocks)
    for (const UnreadableVariant& u : block.unreadable) {
      set.rows.push_back(unreadable_row(block, u));
      // Said at once, as compare says a row that did not run; the row keeps it for every output.
      spdlog::warn("{} / {}: unreadable: {}", printable(block.name), printable(u.name), printable(u.error.what()));
    }
  return set;
}

ResultSet analyze(const Spec& input_spec, const std::string& workspace_device) {
  const Spec spec = spec_on_device(input_spec, workspace_device);  // on cuda, CUDA autocast's rules
  ResultSet results = analyze_spec(spec);
  std::string workspace_of = "none";
  if (!workspace_device.empty()) {
    std::unique_ptr<Backend> backend;
    try {
      if (workspace_device == "cuda" && choose_device("auto").device != "cuda")
        throw std::runtime_error(
            "no usable GPU: cuDNN's workspace sizes come from its heuristic query, which needs one. Without --device "
            "the predicted peaks leave the workspace out; on cuda the measured peak adds the largest workspace one "
            "conv asks for while it runs (compare --device cuda reports it, op by op)");
      backend = make_backend(workspace_device);
    } catch (const std::exception& e) {
      throw InputError({"command line", 0, 0}, "--device", e.what());
    }
    size_t i = 0;
    for (const BlockSpec& block : spec.blocks)
      for (const VariantSpec& v : block.variants) {
        const Graph g = build_variant_graph(block, v);
        const bool training = block.mode == RunMode::train;
        // As compare does: an unsupported variant keeps the backend-free prediction.
        if (const WorkspaceQuery ws = backend_workspace(*backend, g, training))
          results.rows[i].predicted = figures_from(predict_memory(g, training, ws, backend_statistics(*backend, g)));
        ++i;
      }
    workspace_of = backend->name();
  }
  results.engine = engine_name();
  results.provenance = collect_provenance(spec, nullptr);
  results.provenance["predicted_workspace"] = workspace_of;
  return results;
}

}  // namespace convbench

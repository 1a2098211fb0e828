#include "pipeline/analyze.hpp"

#include "graph/checked_math.hpp"
#include "measure/provenance.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

MemoryFigures figures_from(const MemoryPrediction& p) {
  MemoryFigures m;
  m.peak_bytes = p.peak_bytes;
  m.at_peak = p.at_peak;
  m.peak_by_category = p.peak_by_category;
  m.saved_bytes = p.saved_bytes;
  return m;
}

ResultRow analysis_row(const BlockSpec& block, const VariantSpec& variant, const Graph& graph,
                       const VariantAnalysis& a) {
  ResultRow r;
  r.block = block.name;
  r.variant = variant.name;
  r.kind = variant.kind;
  r.point = block.point;
  r.point_label = point_label(block);
  r.is_baseline = variant.name == block.baseline;
  r.dims = block.dims;
  r.dtype = std::string(to_string(block.dtype));
  r.layout = std::string(to_string(block.layout));
  r.mode = std::string(to_string(block.mode));
  r.input_shape = graph.desc(graph.input).shape;
  r.output_shape = graph.desc(graph.output).shape;
  r.kernel = block.kernel;
  r.params = a.params;
  r.buffers = a.buffers;
  r.macs = a.macs;
  r.flops = a.flops;
  r.bytes_forward = a.bytes_forward;
  r.bytes_backward = a.bytes_backward;
  r.predicted = figures_from(a.memory);
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
    }
  }
  return set;
}

ResultSet analyze(const Spec& spec) {
  ResultSet results = analyze_spec(spec);
  results.engine = engine_name();
  results.provenance = collect_provenance(spec, nullptr);
  return results;
}

}  // namespace convbench

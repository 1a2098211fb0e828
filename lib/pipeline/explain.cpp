#include "pipeline/explain.hpp"

#include "analysis/variant_analysis.hpp"
#include "explain/explain_rules.hpp"
#include "explain/variant_facts.hpp"
#include "pipeline/analyze.hpp"
#include "pipeline/device_limits_choice.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

ExplainRun explain(const Spec& spec, ExplainOptions options, std::ostream& notices) {
  if (options.compare.run.time && options.compare.run.per_op_steps == 0)
    options.compare.run.per_op_steps = kExplainPerOpSteps;
  std::vector<VariantFacts> facts;
  // A GPU measures its own limits once, while the backend is alive, in the first row's dtype (the
  // one the limits are for). A measurement that fails leaves the datasheet's numbers.
  std::optional<MeasuredLimits> measured;
  bool limits_probed = false;
  options.compare.after_row = [&](const BlockSpec& block, const VariantSpec& variant, const Graph& g, Backend& backend,
                                  bool training, const ResultRow& row) {
    if (!limits_probed && !limits_given(options.limits)) {
      limits_probed = true;
      try {
        const auto dtype = parse_dtype(compute_dtype(row));
        if (dtype) measured = backend.measurement().measure_limits(*dtype);
        if (measured) notices << "convbench: measured the device's limits: " << measured->method << "\n";
      } catch (const std::exception& e) {
        notices << "convbench: could not measure the device's limits (" << e.what() << "); using known ones\n";
      }
    }
    // The analysis with the workspace of the backend that ran the row: the peak the row predicts.
    const auto analysis_of = [&](const Graph& graph) {
      try {
        return analyze_variant(graph, training, backend_workspace(backend, graph, training),
                               backend_statistics(backend, graph));
      } catch (const std::exception&) {
        return analyze_variant(graph, training);
      }
    };
    facts.push_back(collect_variant_facts(g, analysis_of(g), row));
    // Under AMP, the same variant in float32: what autocast changed in memory and bytes moved.
    if (g.precision != Precision::plain) {
      BlockSpec plain_block = block;
      plain_block.precision = PrecisionChoice{};
      VariantSpec plain_variant = variant;
      plain_variant.precision.reset();
      const Graph plain = build_variant_graph(plain_block, plain_variant);
      const VariantFacts p = collect_variant_facts(plain, analysis_of(plain), row);
      facts.back().precision.plain = PrecisionFacts::Plain{p.memory.saved_bytes, p.memory.peak_bytes, p.bytes};
    }
  };
  ExplainRun run;
  run.results = compare(spec, options.compare, notices);
  // One dtype per explanation's limits: the first row's compute dtype (a spec mixing dtypes or
  // precisions gets the first's, and the limits line says which).
  const std::string dtype = run.results.rows.empty() ? "float32" : compute_dtype(run.results.rows.front());
  const auto limits =
      choose_device_limits(options.limits, run.results.device, dtype, run.results.provenance, notices, measured);
  if (limits) run.results.provenance["device_limits"] = device_limits_json(*limits);
  const bool given = options.limits.peak_flops > 0 && options.limits.bandwidth > 0;
  run.explanation = build_explanation(facts, run.results.device, limits, given ? "" : dtype);
  return run;
}

}  // namespace convbench

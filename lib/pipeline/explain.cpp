#include "pipeline/explain.hpp"

#include "analysis/variant_analysis.hpp"
#include "explain/explain_rules.hpp"
#include "explain/variant_facts.hpp"
#include "pipeline/analyze.hpp"

namespace convbench {

ExplainRun explain(const Spec& spec, ExplainOptions options, std::ostream& notices) {
  if (options.compare.run.time && options.compare.run.per_op_steps == 0)
    options.compare.run.per_op_steps = kExplainPerOpSteps;
  std::vector<VariantFacts> facts;
  // A GPU measures its own limits once, while the backend is alive, in the first row's dtype (the
  // one the limits are for). A measurement that fails leaves the datasheet's numbers.
  std::optional<MeasuredLimits> measured;
  bool limits_probed = false;
  options.compare.after_row = [&](const Graph& g, Backend& backend, bool training, const ResultRow& row) {
    if (!limits_probed && !limits_given(options.limits)) {
      limits_probed = true;
      try {
        const auto dtype = parse_dtype(row.dtype);
        if (dtype) measured = backend.measurement().measure_limits(*dtype);
        if (measured) notices << "convbench: measured the device's limits: " << measured->method << "\n";
      } catch (const std::exception& e) {
        notices << "convbench: could not measure the device's limits (" << e.what() << "); using known ones\n";
      }
    }
    // The analysis with the workspace of the backend that ran the row: the peak the row predicts.
    VariantAnalysis a;
    try {
      a = analyze_variant(g, training, backend_workspace(backend, g, training));
    } catch (const std::exception&) {
      a = analyze_variant(g, training);
    }
    facts.push_back(collect_variant_facts(g, a, row));
  };
  ExplainRun run;
  run.results = compare(spec, options.compare, notices);
  // One dtype per explanation's limits: the first row's (a spec mixing dtypes gets the first's,
  // and the limits line says which).
  const std::string dtype = run.results.rows.empty() ? "float32" : run.results.rows.front().dtype;
  const auto limits =
      choose_device_limits(options.limits, run.results.device, dtype, run.results.provenance, notices, measured);
  if (limits) run.results.provenance["device_limits"] = device_limits_json(*limits);
  const bool given = options.limits.peak_flops > 0 && options.limits.bandwidth > 0;
  run.explanation = build_explanation(facts, run.results.device, limits, given ? "" : dtype);
  return run;
}

}  // namespace convbench

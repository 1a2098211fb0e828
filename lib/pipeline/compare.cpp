#include "pipeline/compare.hpp"

#include <spdlog/spdlog.h>

#include "measure/progress.hpp"
#include "measure/provenance.hpp"
#include "pipeline/analyze.hpp"
#include "report/markup_escape.hpp"
#include "report/run_warnings.hpp"
#include "spec/input_error.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

ResultSet compare(const Spec& spec, const CompareOptions& options, std::ostream& notices) {
  ResultSet results = analyze_spec(spec);  // validates everything before any run
  DeviceChoice choice;
  try {
    choice = choose_device(options.device);
  } catch (const std::invalid_argument& e) {
    throw InputError({"command line", 0, 0}, "--device", e.what());
  }
  if (!choice.reason.empty()) notices << "convbench: " << choice.reason << "\n";
  std::unique_ptr<Backend> backend = make_backend(choice.device, options.backend);
  if (options.run.graph && options.run.time)
    if (const auto why = backend->measurement().replay_unsupported())
      throw InputError({"command line", 0, 0}, "--graph", *why);
  Progress progress(static_cast<int>(results.rows.size()), options.quiet);
  size_t i = 0;
  for (const BlockSpec& block : spec.blocks) {
    for (const VariantSpec& v : block.variants) {
      ResultRow& row = results.rows[i];
      progress.start(static_cast<int>(i++),
                     printable(row.block + (row.point_label.empty() ? "" : " [" + row.point_label + "]") + " / " +
                               row.variant + " on " + backend->name()));
      progress.above([&] {
        spdlog::info("{} / {} [{}] on {}", printable(row.block), printable(row.variant), printable(row.point_label),
                     backend->name());
      });
      const Graph g = build_variant_graph(block, v);
      const bool training = block.mode == RunMode::train;
      // The prediction includes this backend's workspace, so it is comparable byte for byte.
      if (const WorkspaceQuery ws = backend_workspace(*backend, g, training)) {
        try {
          row.predicted = figures_from(predict_memory(g, training, ws));
        } catch (const std::exception&) {
          // keep the backend-independent prediction; the run reports the failure
        }
      }
      run_variant(g, training, *backend, options.run, row);
      if (options.after_row) options.after_row(g, *backend, training, row);
      // Warnings go to the log (stderr) above the progress line, never into it.
      progress.above([&] {
        if (row.status != RunStatus::ok)
          spdlog::warn("{} / {}: {}: {}", printable(row.block), printable(row.variant), to_string(row.status),
                       printable(row.message));
        for (const std::string& w : row_warnings(row)) spdlog::warn("{}", printable(w));
        spdlog::default_logger()->flush();
      });
    }
  }
  results.engine = engine_name();
  results.device = backend->name();
  results.provenance = collect_provenance(spec, backend.get());
  if (const nlohmann::json clocks = clock_provenance(results.rows); !clocks.is_null())
    results.provenance["clock"] = clocks;
  return results;
}

}  // namespace convbench

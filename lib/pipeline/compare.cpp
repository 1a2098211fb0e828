#include "pipeline/compare.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "measure/progress.hpp"
#include "measure/provenance.hpp"
#include "pipeline/analyze.hpp"
#include "report/result_columns.hpp"
#include "report/run_warnings.hpp"
#include "results/row_pairing.hpp"
#include "util/caught_signals.hpp"
#include "util/input_error.hpp"
#include "util/markup_escape.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {

void measure_row(const Graph& graph, bool training, Backend& backend, const RunOptions& run, ResultRow& row) {
  // The prediction includes this backend's workspace, so it is comparable byte for byte.
  if (const WorkspaceQuery ws = backend_workspace(backend, graph, training)) {
    try {
      row.predicted = figures_from(predict_memory(graph, training, ws, backend_statistics(backend, graph)));
    } catch (const std::exception&) {
      // keep the backend-independent prediction; the run reports the failure
    }
  }
  run_variant(graph, training, backend, run, row);
}

ResultSet compare(const Spec& input_spec, const CompareOptions& options, std::ostream& notices) {
  ResultSet results = analyze_spec(input_spec);  // validates everything before any run
  DeviceChoice choice;
  try {
    choice = choose_device(options.device);
  } catch (const std::invalid_argument& e) {
    throw InputError({"command line", 0, 0}, "--device", e.what());
  }
  const Spec spec = spec_on_device(input_spec, choice.device);
  if (!choice.reason.empty()) notices << "convbench: " << choice.reason << "\n";
  std::unique_ptr<Backend> backend = make_backend(choice.device, options.backend);
  if (options.run.graph && options.run.time)
    if (const auto why = backend->measurement().replay_unsupported())
      throw InputError({"command line", 0, 0}, "--graph", *why);
  results.engine = engine_name();
  results.device = backend->name();
  results.provenance = collect_provenance(spec, backend.get());
  std::vector<bool> selected(results.rows.size(), true);
  if (options.run_row)
    for (size_t k = 0; k < selected.size(); ++k) selected[k] = options.run_row(k);
  // A variant that could not be read is a row already (analyze_spec), with nothing to run.
  int to_run = 0;
  for (size_t k = 0; k < selected.size(); ++k) to_run += selected[k] && counted(results.rows[k].status) ? 1 : 0;
  Progress progress(to_run, options.quiet);
  std::optional<CaughtSignals> signals;
  RunOptions run = options.run;
  if (options.stop_on_signal) {
    signals.emplace();
    run.stop_requested = [&signals] { return signals->pending() != 0; };
  }
  std::optional<size_t> interrupted_at;  // the first row that did not finish
  size_t i = 0;
  int started = 0;
  for (const BlockSpec& block : spec.blocks) {
    const int started_before = started;
    for (const VariantSpec& v : block.variants) {
      const size_t index = i++;
      if (!selected[index] || interrupted_at) continue;
      if (signals && signals->pending()) {
        interrupted_at = index;
        continue;
      }
      ResultRow& row = results.rows[index];
      const std::string label = printable(key_of(row).text() + " on " + backend->name());
      const int item = started++;
      progress.start(item, label);
      progress.above([&] {
        spdlog::info("{} / {} [{}] on {}", printable(row.block), printable(row.variant), printable(row.point_label),
                     backend->name());
      });
      const Graph g = build_variant_graph(block, v);
      const bool training = block.mode == RunMode::train;
      // analyze_spec counted an AMP row under CPU autocast's rules; on cuda it runs CUDA's, and its
      // counts and predicted memory are those of the graph that runs (an AMP variant never folds).
      if (g.precision != Precision::plain && g.autocast_device != AutocastDevice::cpu)
        row = analysis_row(block, v, g, analyze_variant(g, training));
      try {
        measure_row(g, training, *backend, run, row);
      } catch (const RunInterrupted&) {
        interrupted_at = index;
        continue;
      }
      if (options.after_row) options.after_row(block, v, g, *backend, training, row);
      // A row that did not run is said at once, in the log (stderr) above the progress line. The
      // warnings about a row that ran (disturbed, clock drop, no graph) are said once, with the
      // results (report/run_warnings.hpp: under the tables; write_results for the other formats).
      if (row.status != RunStatus::ok)
        progress.above([&] {
          spdlog::warn("{} / {}: {}: {}", printable(row.block), printable(row.variant), to_string(row.status),
                       printable(row.message));
          spdlog::default_logger()->flush();
        });
      progress.finish(item, label, to_string(row.status) + (ran(row) ? trust_suffix(row) : ""));
      if (options.row_done) options.row_done(results, index);
    }
    if (options.after_block && started > started_before && !interrupted_at) {
      progress.start(started - 1, printable(block.name + (block.point.empty() ? "" : " [" + point_label(block) + "]") +
                                            " / " + options.after_block->label));
      for (const std::string& warning : options.after_block->run(block, results))
        progress.above([&] {
          spdlog::warn("{}", printable(warning));
          spdlog::default_logger()->flush();
        });
    }
  }
  if (interrupted_at) {
    // The rows that finished stay; the one interrupted and those never started are named in the
    // run's provenance, so that every output and reader knows the run is not the whole spec.
    std::vector<std::string> not_run;
    for (size_t k = *interrupted_at; k < results.rows.size(); ++k)
      if (selected[k] && counted(results.rows[k].status)) {
        not_run.push_back(key_of(results.rows[k]).text());
        selected[k] = false;
      }
    int64_t finished = 0;
    for (size_t k = 0; k < selected.size(); ++k) finished += selected[k] && counted(results.rows[k].status) ? 1 : 0;
    results.provenance["interrupted"] = {{"signal", signal_name(signals->pending())},
                                         {"finished_rows", finished},
                                         {"rows", to_run},
                                         {"not_run", not_run}};
  }
  if (options.run_row || interrupted_at) {
    std::vector<ResultRow> kept;
    for (size_t k = 0; k < results.rows.size(); ++k)
      if (selected[k]) kept.push_back(std::move(results.rows[k]));
    results.rows = std::move(kept);
  }
  if (const nlohmann::json clocks = clock_provenance(results.rows); !clocks.is_null())
    results.provenance["clock"] = clocks;
  return results;
}

}  // namespace convbench

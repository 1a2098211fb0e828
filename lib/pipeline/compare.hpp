// The `compare` pipeline: every variant of a spec built on one backend and measured (time and
// memory), next to its analysis, with the provenance of the run.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "backends/backend_registry.hpp"
#include "measure/variant_runner.hpp"
#include "results/results.hpp"
#include "spec/spec.hpp"

namespace convbench {

struct CompareOptions {
  std::string device = "auto";  // auto | cpu | reference | cuda
  RunOptions run;
  BackendOptions backend;
  bool quiet = false;  // no progress line on stderr
  // Called after each variant ran, with its graph and the backend (explain gathers its facts here,
  // while the graph and the backend's workspace sizes are at hand).
  std::function<void(const BlockSpec& block, const VariantSpec& variant, const Graph& graph, Backend& backend,
                     bool training, const ResultRow& row)>
      after_row;
  // A share of the rows (compare --shard): only rows for which `run_row(index)` is true run, and
  // the others are left out of the results. Empty: every row.
  std::function<bool(size_t index)> run_row;
  // Called after each row ran, with the results so far (engine, device and provenance filled in,
  // the rows not run yet still the analysis'), so a shard can save its progress.
  std::function<void(const ResultSet& so_far, size_t index)> row_done;
  // Other work after the rows of each block (one sweep point of it), named `label` on the progress
  // line: `compare --peer` runs the peer on the same block there, so that the two runtimes take
  // turns block by block and load from elsewhere falls on both alike. It returns warnings for the
  // log (the peer failed on this block, say).
  struct AfterBlock {
    std::string label;
    std::function<std::vector<std::string>(const BlockSpec& block, const ResultSet& so_far)> run;
  };
  std::optional<AfterBlock> after_block;
  // Catch SIGINT, SIGTERM and SIGHUP while the variants run: the one running stops at its next
  // sample, no other starts, and the results hold the rows that finished, marked as an
  // interrupted run (interruption_of); the caller writes them and then ends as the signal asked.
  // Off: a signal ends the process at once, as it would any program.
  bool stop_on_signal = false;
};

// Validates the whole spec first (analyze_spec), then runs every variant in spec order. A bad
// --device or an unusable --graph throws InputError before anything runs; a variant that fails
// at run time gets its status (oom, unsupported, error) and the run goes on. Notices (why `auto`
// chose a device) go to `notices`; warnings about rows go to the log. With `run_row`, the rows
// left out are dropped from the returned set.
ResultSet compare(const Spec& spec, const CompareOptions& options, std::ostream& notices);

// One row as compare measures it: `row` (its analysis) gets the prediction with this backend's
// workspace, then run_variant's measurement. `advise` measures its rows the same way.
void measure_row(const Graph& graph, bool training, Backend& backend, const RunOptions& run, ResultRow& row);

}  // namespace convbench

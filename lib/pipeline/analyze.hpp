// The `analyze` pipeline: the analysis part of result rows (counts and predicted memory) of every
// variant of a spec, built without running anything. `compare` and `validate` start from it.
#pragma once

#include <string>

#include "analysis/variant_analysis.hpp"
#include "graph/graph.hpp"
#include "results/results.hpp"
#include "runtime/backend.hpp"
#include "spec/spec.hpp"

namespace convbench {

ResultRow analysis_row(const BlockSpec& block, const VariantSpec& variant, const Graph& graph,
                       const VariantAnalysis& analysis);

// A variant whose file could not be read: status unreadable, the error as its message, the
// block's input shape, and no counts.
ResultRow unreadable_row(const BlockSpec& block, const UnreadableVariant& variant);

// Builds and analyses every variant of every (expanded) block; throws InputError located at the
// variant when a graph is invalid or a count overflows 64 bits. The rows of the variants that
// could not be read (BlockSpec::unreadable) follow all the others, so that rows[i] is the i-th
// read variant of the spec, block by block.
ResultSet analyze_spec(const Spec& spec);

MemoryFigures figures_from(const MemoryPrediction& p);

// The workspace `backend` allocates for each op of `graph` (it must outlive the query), for a
// prediction comparable byte for byte with what that backend measures; empty when the backend
// cannot run every op, so the prediction stays backend-independent (the run says why).
WorkspaceQuery backend_workspace(Backend& backend, const Graph& graph, bool training);
// Which ops' statistics `backend` fills from the op before them in `graph` (it must outlive the
// query; --conv-fusion conv_bn_stats), for the same prediction.
StatisticsQuery backend_statistics(const Backend& backend, const Graph& graph);

// What `convbench analyze` writes: analyze_spec's rows with the engine and the provenance.
// `workspace_device` empty: predicted peaks leave every backend's workspace out (provenance
// predicted_workspace "none"); cpu or reference: they include that backend's workspace, queried
// without running anything, so they equal what `compare --device` on it predicts and measures
// (predicted_workspace names the backend). cuda needs a GPU to ask cuDNN: without one, InputError;
// with one, AMP variants are counted under CUDA autocast's rules, as compare runs them there.
ResultSet analyze(const Spec& spec, const std::string& workspace_device = "");

}  // namespace convbench

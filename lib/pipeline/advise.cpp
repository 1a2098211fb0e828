#include "pipeline/advise.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "analysis/variant_analysis.hpp"
#include "backends/backend_registry.hpp"
#include "measure/host_activity.hpp"
#include "measure/progress.hpp"
#include "measure/provenance.hpp"
#include "pipeline/advice_candidates.hpp"
#include "pipeline/analyze.hpp"
#include "pipeline/fold_facts.hpp"
#include "spec/block_kind_registry.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

bool host_device(const std::string& device) { return device == "cpu" || device == "reference"; }

// The user's variants: the named ones in every block that has them, else each block's baseline.
std::vector<std::pair<size_t, size_t>> chosen_variants(const Spec& spec, const std::vector<std::string>& names) {
  std::vector<std::pair<size_t, size_t>> out;
  std::vector<bool> found(names.size(), false);
  std::vector<std::string> known;
  for (size_t b = 0; b < spec.blocks.size(); ++b) {
    const BlockSpec& block = spec.blocks[b];
    for (size_t v = 0; v < block.variants.size(); ++v) {
      const std::string& name = block.variants[v].name;
      if (std::find(known.begin(), known.end(), name) == known.end()) known.push_back(name);
      if (names.empty()) {
        if (name == block.baseline) out.emplace_back(b, v);
        continue;
      }
      for (size_t n = 0; n < names.size(); ++n)
        if (names[n] == name) {
          found[n] = true;
          out.emplace_back(b, v);
        }
    }
  }
  for (size_t n = 0; n < names.size(); ++n)
    if (!found[n]) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InputError({"command line", 0, 0}, "--variant",
                       "no block of the spec has a variant named \"" + names[n] + "\" (its variants: " + list + ")");
    }
  return out;
}

ResultRow measure_candidate(const AdviceCandidate& c, Backend& backend, const RunOptions& run, bool first_round) {
  const VariantSpec& v = c.block.variants[c.variant];
  const Graph g = build_variant_graph(c.block, v);
  const bool training = c.block.mode == RunMode::train;
  ResultRow row = analysis_row(c.block, v, g, analyze_variant(g, training));
  // A fold is proven equal to its source once (the proof does not depend on the round).
  if (first_round && folds_another(v)) row.fold = fold_facts(c.block, v);
  measure_row(g, training, backend, run, row);
  return row;
}

AdviceTry try_of(const AdviceCandidate& c) { return {static_cast<const AdviceChange&>(c), {}}; }

// A change the run's backend cannot compute (mixed precision on the cpu backend, say) is not
// tried: it would measure nothing each round. It is listed with the backend's reason instead.
void drop_what_the_backend_cannot_run(AdviceCandidates& cands, const Backend& backend) {
  std::vector<AdviceCandidate> kept;
  for (AdviceCandidate& c : cands.tries) {
    const Graph g = build_variant_graph(c.block, c.block.variants[c.variant]);
    std::optional<std::string> why;
    for (const Op& op : g.ops)
      if ((why = backend.unsupported(g, op))) break;
    if (why)
      cands.not_tried.emplace_back(c.change, "the " + backend.name() + " backend cannot run it: " + *why);
    else
      kept.push_back(std::move(c));
  }
  cands.tries = std::move(kept);
}

// The original is measured in every round; a median that moved between rounds means the machine's
// speed changed during the run, which the per-round comparison absorbs but a reader should know.
std::vector<std::string> drift_warnings(const AdviceTry& original, double threshold) {
  double low = 0, high = 0;
  for (const ResultRow& r : original.rounds) {
    const std::optional<TimeStats>& t = headline_time(r);
    if (!ran(r) || !t || t->median <= 0) continue;
    low = low == 0 ? t->median : std::min(low, t->median);
    high = std::max(high, t->median);
  }
  if (low <= 0 || high / low - 1 <= threshold) return {};
  return {"the variant as written took " + format_fixed(low, 3) + " to " + format_fixed(high, 3) +
          " ms in different rounds: the machine's speed changed during the run; each change is judged against the "
          "original of its own round"};
}

}  // namespace

Advice advise(const Spec& input_spec, const AdviseOptions& options, std::ostream& notices) {
  analyze_spec(input_spec);  // validates everything before any run
  const std::vector<std::pair<size_t, size_t>> chosen = chosen_variants(input_spec, options.variants);
  DeviceChoice choice;
  try {
    choice = choose_device(options.compare.device);
  } catch (const std::invalid_argument& e) {
    throw InputError({"command line", 0, 0}, "--device", e.what());
  }
  const Spec spec = spec_on_device(input_spec, choice.device);  // AMP tries follow the device's rules
  if (!choice.reason.empty()) notices << "convbench: " << choice.reason << "\n";
  const bool host = host_device(choice.device);
  // On a host backend every run names its threads: a backend sets OpenMP's count when it is made,
  // and a try with another count must not leave it behind for the next one.
  BackendOptions base = options.compare.backend;
  if (host && base.threads == 0) base.threads = compute_threads();
  std::unique_ptr<Backend> backend = make_backend(choice.device, base);
  if (options.compare.run.graph && options.compare.run.time)
    if (const auto why = backend->measurement().replay_unsupported())
      throw InputError({"command line", 0, 0}, "--graph", *why);

  Advice advice;
  advice.engine = engine_name();
  advice.device = backend->name();
  advice.provenance = collect_provenance(spec, backend.get());
  // The memory pass is exact (the allocator's bytes): a second round would measure the same bytes.
  advice.rounds = options.compare.run.time ? options.rounds : 1;
  advice.time_threshold = options.time_threshold;
  advice.memory_threshold = options.memory_threshold;
  advice.timed = options.compare.run.time;
  const std::vector<int> other_threads = host ? thread_choices(base.threads, cpu_affinity_count()) : std::vector<int>{};

  std::vector<AdviceCandidates> candidates;
  int total = 0;
  for (const auto& [b, v] : chosen) {
    candidates.push_back(advice_candidates(spec.blocks[b], v, host ? base.threads : 0, other_threads));
    drop_what_the_backend_cannot_run(candidates.back(), *backend);
    total += static_cast<int>(1 + candidates.back().tries.size()) * advice.rounds;
  }
  Progress progress(total, options.compare.quiet);
  int started = 0;
  for (const AdviceCandidates& cands : candidates) {
    const BlockSpec& block = cands.original.block;
    const VariantSpec& variant = block.variants[cands.original.variant];
    AdviceSubject subject;
    subject.block = block.name;
    subject.point_label = point_label(block);
    subject.variant = variant.name;
    subject.variant_key = variant.key_path;
    subject.mode = std::string(to_string(block.mode));
    subject.device = advice.device;
    subject.original = try_of(cands.original);
    for (const AdviceCandidate& c : cands.tries) subject.tried.push_back(try_of(c));
    subject.not_tried = cands.not_tried;
    // Round 1: the original, then the changes; round 2 backwards, the original last; and so on.
    std::vector<int> order(cands.tries.size() + 1);
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k) - 1;  // -1: the original
    for (int round = 0; round < advice.rounds; ++round) {
      if (round > 0) std::reverse(order.begin(), order.end());
      for (int k : order) {
        const AdviceCandidate& c = k < 0 ? cands.original : cands.tries[static_cast<size_t>(k)];
        AdviceTry& t = k < 0 ? subject.original : subject.tried[static_cast<size_t>(k)];
        const std::string label = block.name + (block.point.empty() ? "" : " [" + subject.point_label + "]") + " / " +
                                  variant.name + ": " + c.change + " (round " + std::to_string(round + 1) + ")";
        progress.start(started++, printable(label));
        progress.above([&] { spdlog::info("{} on {}", printable(label), advice.device); });
        std::unique_ptr<Backend> own;
        if (host) {
          BackendOptions with = base;
          with.threads = c.threads;
          own = make_backend(choice.device, with);
        }
        t.rounds.push_back(measure_candidate(c, host ? *own : *backend, options.compare.run, round == 0));
        const ResultRow& row = t.rounds.back();
        if (row.status != RunStatus::ok)
          progress.above([&] {
            spdlog::warn("{}: {}: {}", printable(label), to_string(row.status), printable(row.message));
            spdlog::default_logger()->flush();
          });
      }
    }
    subject.warnings = drift_warnings(subject.original, options.time_threshold);
    advice.subjects.push_back(std::move(subject));
  }
  // The next backend made in this process computes with the run's threads again.
  if (host) backend = make_backend(choice.device, base);
  return advice;
}

}  // namespace convbench

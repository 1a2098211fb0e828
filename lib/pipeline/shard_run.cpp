#include "pipeline/shard_run.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <map>
#include <memory>
#include <system_error>

#include "pipeline/analyze.hpp"
#include "sweep/merge.hpp"
#include "sweep/shard_file.hpp"
#include "util/input_error.hpp"
#include "util/json_text.hpp"
#include "util/output_writer.hpp"

namespace convbench {

Plan plan_of(const Spec& spec) { return make_plan(spec, analyze_spec(spec)); }

namespace {

// The shard's earlier results file, when there is one to continue from. A damaged one (truncated,
// overwritten) is moved aside and the shard runs from its start: this run replaces the file
// anyway, and a scheduler's retry must not fail on it forever.
std::optional<ShardFile> earlier_attempt(const std::string& path, ShardPlans& plans, std::ostream& notices) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw InputError({path, 0, 0}, "--json", "cannot read it: " + std::generic_category().message(errno));
  }
  if (!S_ISREG(st.st_mode)) return std::nullopt;  // the output writer refuses it, saying why
  ShardFileRead read = read_shard_file(path, plans);
  if (!read.file) {
    const std::string aside = move_damaged_shard_aside(path);
    notices << "note: " << read.damage << "\nnote: the damaged shard file is now " << aside
            << "; the shard runs from its start\n";
  }
  return std::move(read.file);
}

}  // namespace

ResultSet compare_shard(const Spec& spec, const CompareOptions& options, const ShardRunOptions& o,
                        std::ostream& notices) {
  const auto planned = std::make_shared<const Plan>(plan_of(spec));
  const Plan& plan = *planned;
  // The shard file names the plan file it was checked against, rather than carrying the plan
  // (shard_plans.hpp); without one it carries the plan.
  std::string plan_reference;
  if (!o.plan_file.empty()) {
    const Plan given = load_plan_file(o.plan_file);
    if (given.hash != plan.hash)
      throw InputError({o.plan_file, 0, 0}, "plan_hash",
                       "is plan " + given.hash.substr(0, 12) + ", but " + spec.file + " gives plan " +
                           plan.hash.substr(0, 12) +
                           ": the plan is of another spec, or the spec changed since (run convbench plan again)");
    plan_reference = plan_file_reference(o.plan_file, o.file);
  }
  const std::vector<int> shard_of = assign_shards(plan, o.shard.count);
  std::vector<size_t> mine;
  for (size_t i = 0; i < shard_of.size(); ++i)
    if (shard_of[i] == o.shard.index) mine.push_back(i);

  // Rows an earlier attempt settled are kept, and not run again.
  std::map<size_t, ResultRow> done;
  ResultSet header;  // engine, device, provenance of the file
  ShardPlans plans(planned);
  if (const auto earlier = earlier_attempt(o.file, plans, notices)) {
    if (earlier->plan->hash != plan.hash || earlier->shard.index != o.shard.index ||
        earlier->shard.count != o.shard.count)
      throw InputError({o.file, 0, 0}, "--json",
                       "holds shard " + std::to_string(earlier->shard.index) + "/" +
                           std::to_string(earlier->shard.count) + " of plan " + earlier->plan->hash.substr(0, 12) +
                           ", not shard " + std::to_string(o.shard.index) + "/" + std::to_string(o.shard.count) +
                           " of plan " + plan.hash.substr(0, 12) + ": remove it or name another file");
    for (const ShardItem& s : earlier->items)
      if (s.row && settled(earlier->results.rows[*s.row].status)) done[s.item] = earlier->results.rows[*s.row];
    header.engine = earlier->results.engine;
    header.device = earlier->results.device;
    header.provenance = earlier->results.provenance;
  }

  auto shard_file = [&](const ResultSet& head) {
    ShardFile f;
    f.plan = planned;
    f.plan_file = plan_reference;
    f.shard = o.shard;
    f.results.engine = head.engine;
    f.results.device = head.device;
    f.results.provenance = head.provenance;
    for (size_t item : mine) {
      ShardItem s{item, std::nullopt};
      if (const auto it = done.find(item); it != done.end()) {
        s.row = f.results.rows.size();
        f.results.rows.push_back(it->second);
      }
      f.items.push_back(s);
    }
    return f;
  };
  auto save = [&](const ShardFile& f) {
    write_output_files({{{o.file, "--json"}, json_text(shard_file_json(f), 2) + "\n"}}, o.inputs);
  };

  const size_t to_run = mine.size() - done.size();
  notices << "convbench: shard " << o.shard.index << "/" << o.shard.count << " of plan " << plan.hash.substr(0, 12)
          << ": " << mine.size() << " of " << plan.items.size() << " items, " << done.size() << " done before, "
          << to_run << " to run\n";
  if (to_run == 0) {
    const ShardFile f = shard_file(header);
    if (!header.engine.empty()) return f.results;  // already complete: the file stays as it is
  }

  const bool kept_rows = !done.empty();
  CompareOptions run = options;
  std::vector<bool> run_it(plan.items.size(), false);
  for (size_t item : mine) run_it[item] = !done.count(item);
  run.run_row = [&run_it](size_t index) { return index < run_it.size() && run_it[index]; };
  run.row_done = [&](const ResultSet& so_far, size_t index) {
    // One file, one provenance: rows kept from an attempt on another device or build would be
    // recorded as this run's, and merge could not tell.
    if (kept_rows && run_signature(header) != run_signature(so_far))
      throw InputError({o.file, 0, 0}, "--json",
                       "holds rows run on " + run_signature(header).front().second + " with " +
                           run_signature(header)[1].second + ", but this run is on " +
                           run_signature(so_far).front().second + " with " + run_signature(so_far)[1].second +
                           ": rerun the shard where it ran, or remove the file to start it again");
    done[index] = so_far.rows[index];
    save(shard_file(so_far));
  };
  const ResultSet finished = compare(spec, run, notices);
  const ShardFile f = shard_file(finished);  // this run's provenance, with the clock summary
  save(f);
  return f.results;
}

}  // namespace convbench

#include "sweep/slurm_sweep.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <system_error>

#include "results/json_reader.hpp"
#include "sweep/shard_assignment.hpp"
#include "sweep/shard_file.hpp"
#include "sweep/slurm_submit.hpp"
#include "util/input_error.hpp"
#include "util/json_text.hpp"
#include "util/output_writer.hpp"

namespace convbench {
namespace {

void make_folder(const std::string& path) {
  if (::mkdir(path.c_str(), 0777) == 0) return;
  const int err = errno;
  struct stat st {};
  if (err == EEXIST && ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
  throw InputError(
      {path, 0, 0}, "--dir",
      err == EEXIST ? "exists and is not a folder" : "cannot create it: " + std::generic_category().message(err));
}

}  // namespace

std::vector<int> shards_to_run(const Plan& plan, const SlurmSweepFiles& files, int shards) {
  std::vector<int> todo;
  // The shards name the folder's plan file; this plan is the same when their hash is.
  ShardPlans plans(std::make_shared<const Plan>(plan));
  for (int i = 0; i < shards; ++i) {
    const std::string path = files.shard(i);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno != ENOENT)
        throw InputError({path, 0, 0}, "--dir", "cannot read it: " + std::generic_category().message(errno));
      todo.push_back(i);
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      todo.push_back(i);  // the shard itself refuses to write there, and says why, in its log
      continue;
    }
    const ShardFileRead read = read_shard_file(path, plans);
    if (!read.file) {
      todo.push_back(i);  // damaged: the shard moves it aside and runs from its start
      continue;
    }
    const ShardFile& shard = *read.file;
    if (shard.plan->hash != plan.hash || shard.shard.count != shards || shard.shard.index != i)
      throw InputError({path, 0, 0}, "shard",
                       "holds shard " + std::to_string(shard.shard.index) + "/" + std::to_string(shard.shard.count) +
                           " of plan " + shard.plan->hash.substr(0, 12) + ", not " + std::to_string(i) + "/" +
                           std::to_string(shards) + " of plan " + plan.hash.substr(0, 12) +
                           ": this folder holds another sweep; choose another --dir or remove it");
    if (!shard_complete(shard)) todo.push_back(i);
  }
  return todo;
}

int run_slurm_sweep(const Plan& plan, const SlurmSweepOptions& o, std::ostream& out) {
  const SlurmSweepFiles& f = o.files;
  check_sbatch_path("--dir", f.dir);
  check_sbatch_path("SPEC", f.spec);
  check_sbatch_path("convbench", f.convbench);
  check_sbatch_value("--partition", o.settings.partition);
  check_sbatch_value("--gres", o.settings.gres);
  check_sbatch_value("--time", o.settings.time);

  const std::vector<int> todo = shards_to_run(plan, f, o.shards);
  if (todo.empty()) {
    out << "every shard of " << o.shards << " (plan " << plan.hash.substr(0, 12) << ", " << plan.items.size()
        << " items) is complete in " << f.dir << "; nothing to submit\n"
        << "merged results: " << f.merged() << " (convbench merge " << f.dir << "/shard-*.json -o " << f.merged()
        << ")\n";
    return 0;
  }
  const std::string shard_script = shard_array_script(f, plan.hash, o.shards, todo, o.settings, o.compare_args);
  const std::string merge_script = merge_job_script(f, plan.hash, o.shards, o.settings);
  if (o.dry_run) {
    out << "# " << f.shard_script() << "\n" << shard_script << "\n# " << f.merge_script() << "\n" << merge_script;
    return 0;
  }
  const std::string name = sweep_job_name(plan.hash);
  if (const std::vector<std::string> queued = queued_jobs(name); !queued.empty()) {
    std::string ids;
    for (const std::string& id : queued) ids += (ids.empty() ? "" : ",") + id;
    throw InputError({"command line", 0, 0}, "slurm",
                     "jobs of this sweep are still queued or running (" + ids + ", squeue --name=" + name +
                         "): wait for them or scancel them, then run this again");
  }
  make_folder(f.dir);
  make_folder(f.logs());
  write_output_files({{{f.plan(), "plan"}, json_text(plan_to_json(plan), 2) + "\n"},
                      {{f.shard_script(), "shards script"}, shard_script},
                      {{f.merge_script(), "merge script"}, merge_script}},
                     {f.spec});
  const std::string array_id = submit_batch({}, f.shard_script());
  const std::string merge_id = submit_batch({"--dependency=afterany:" + array_id}, f.merge_script());
  out << "plan " << plan.hash.substr(0, 12) << ": " << plan.items.size() << " items in " << o.shards
      << " shards; submitting " << todo.size() << " (" << array_indices(todo) << ")\n"
      << "shards: job array " << array_id << " (tasks " << array_indices(todo) << "), results " << f.dir
      << "/shard-I.json, logs " << f.logs() << "/\n"
      << "merge:  job " << merge_id << " after every task ended (afterany), results " << f.merged() << "\n";
  return 0;
}

}  // namespace convbench

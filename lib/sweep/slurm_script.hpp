// The two batch scripts of a Slurm sweep: a job array whose task I runs `convbench compare
// --shard /N` (I from SLURM_ARRAY_TASK_ID), and a merge job. Every value that comes from the user
// is single-quoted for the shell, and values that go on `#SBATCH` lines are checked to be plain
// (no spaces, quotes or newlines, which would end or add a directive).
#pragma once

#include <string>
#include <vector>

namespace convbench {

struct SlurmJobSettings {
  std::string partition;  // --partition (empty: the cluster's default)
  std::string gres;       // --gres for the shard tasks, e.g. gpu:1
  std::string time;       // --time per task, e.g. 01:00:00
};

// Where a sweep's files live: everything absolute, since jobs start in another directory and may
// run on another node (a shared file system).
struct SlurmSweepFiles {
  std::string convbench;  // this program
  std::string spec;
  std::string dir;  // plan.json, shard-I.json, results.json, the scripts, logs/
  std::string plan() const { return dir + "/plan.json"; }
  std::string shard(int index) const { return dir + "/shard-" + std::to_string(index) + ".json"; }
  std::string merged() const { return dir + "/results.json"; }
  std::string shard_script() const { return dir + "/shards.sbatch"; }
  std::string merge_script() const { return dir + "/merge.sbatch"; }
  std::string logs() const { return dir + "/logs"; }
};

// 'text' for a POSIX shell ('it'\''s').
std::string shell_quote(const std::string& text);
// "0-3", "2", "1,3,5-7": sbatch's --array syntax for sorted indices.
std::string array_indices(const std::vector<int>& sorted);
// InputError naming `flag` when `value` cannot stand on an #SBATCH line, or a path cannot be used
// in one (spaces, quotes, control characters, '%', which sbatch expands in file names).
void check_sbatch_value(const std::string& flag, const std::string& value);
void check_sbatch_path(const std::string& what, const std::string& path);

// The job name both jobs carry, so squeue finds a sweep's jobs: convbench-<12 digits of the plan hash>.
std::string sweep_job_name(const std::string& plan_hash);

std::string shard_array_script(const SlurmSweepFiles& files, const std::string& plan_hash, int shard_count,
                               const std::vector<int>& indices, const SlurmJobSettings& settings,
                               const std::vector<std::string>& compare_args);
std::string merge_job_script(const SlurmSweepFiles& files, const std::string& plan_hash, int shard_count,
                             const SlurmJobSettings& settings);

}  // namespace convbench

// `convbench slurm`: a spec's plan as a Slurm job array of N shards plus a merge job that runs
// after all of them ended (afterany), submitted with sbatch. A rerun in the same folder submits
// only the shards whose results are missing or incomplete.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sweep/plan.hpp"
#include "sweep/slurm_script.hpp"

namespace convbench {

struct SlurmSweepOptions {
  SlurmSweepFiles files;
  int shards = 1;
  SlurmJobSettings settings;
  std::vector<std::string> compare_args;  // passed to every `convbench compare` shard
  bool dry_run = false;                   // print the scripts, write and submit nothing
};

// The shards that still have work: no results file, or one with pending or failed items. A file
// of another plan or shard count is refused (InputError): that folder holds another sweep.
std::vector<int> shards_to_run(const Plan& plan, const SlurmSweepFiles& files, int shards);

// Plans, writes the scripts and the plan into files.dir and submits; what it did (or, with
// dry_run, the two scripts) goes to `out`. Returns the exit code.
int run_slurm_sweep(const Plan& plan, const SlurmSweepOptions& options, std::ostream& out);

}  // namespace convbench

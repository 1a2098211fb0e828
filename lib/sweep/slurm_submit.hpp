// The calls to Slurm's own commands: sbatch to submit, squeue to see what is still queued. They
// run as child processes with argument vectors (child_process.hpp); SLURM_CONF and PATH come from
// the environment, as for any Slurm user.
#pragma once

#include <string>
#include <vector>

namespace convbench {

// The job id in `sbatch --parsable` output ("1234" or "1234;cluster"); std::runtime_error when
// it is anything else.
std::string parse_sbatch_parsable(const std::string& output);

// `sbatch --parsable ARGS... SCRIPT`; the job id. std::runtime_error with sbatch's message when
// it fails.
std::string submit_batch(const std::vector<std::string>& args, const std::string& script);

// The ids of the jobs named `job_name` that are still pending or running (`squeue -h -o %A --name`).
std::vector<std::string> queued_jobs(const std::string& job_name);

}  // namespace convbench

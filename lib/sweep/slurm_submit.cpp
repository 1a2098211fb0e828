#include "sweep/slurm_submit.hpp"

#include <set>
#include <sstream>
#include <stdexcept>

#include "sweep/child_process.hpp"

namespace convbench {
namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  const size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::string parse_sbatch_parsable(const std::string& output) {
  const std::string line = trimmed(output);
  const std::string id = line.substr(0, line.find(';'));
  if (!all_digits(id) || line.find('\n') != std::string::npos)
    throw std::runtime_error("sbatch --parsable printed \"" + line + "\", not a job id");
  return id;
}

std::string submit_batch(const std::vector<std::string>& args, const std::string& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(script);
  const ChildResult r = run_child(argv);
  if (r.exit_code != 0) throw std::runtime_error("sbatch " + script + " failed: " + describe_failure(r));
  return parse_sbatch_parsable(r.out);
}

std::vector<std::string> queued_jobs(const std::string& job_name) {
  const ChildResult r = run_child({"squeue", "-h", "-o", "%A", "--name=" + job_name});
  if (r.exit_code != 0) throw std::runtime_error("squeue failed: " + describe_failure(r));
  std::set<std::string> ids;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    line = trimmed(line);
    if (line.empty()) continue;
    if (!all_digits(line)) throw std::runtime_error("squeue printed \"" + line + "\", not a job id");
    ids.insert(line);
  }
  return {ids.begin(), ids.end()};
}

}  // namespace convbench

#include "sweep/slurm_script.hpp"

#include "results/index_ranges.hpp"
#include "util/input_error.hpp"

namespace convbench {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string array_indices(const std::vector<int>& sorted) { return index_ranges(sorted); }

void check_sbatch_value(const std::string& flag, const std::string& value) {
  for (char c : value) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("_.:,=+-/@").find(c) != std::string_view::npos;
    if (!plain)
      throw InputError({"command line", 0, 0}, flag,
                       "\"" + value +
                           "\" has a character an #SBATCH line cannot carry (letters, digits and _.:,=+-/@ "
                           "only)");
  }
}

void check_sbatch_path(const std::string& what, const std::string& path) {
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == ' ' || c == '\'' || c == '"' || c == '\\' ||
        c == '%' || c == '$' || c == '`')
      throw InputError({path, 0, 0}, what,
                       "a Slurm sweep needs paths without spaces, quotes, '%', '$', '`', backslashes or control "
                       "characters (they go on #SBATCH lines, where sbatch reads them unquoted)");
}

std::string sweep_job_name(const std::string& plan_hash) { return "convbench-" + plan_hash.substr(0, 12); }

namespace {

std::string common_directives(const std::string& plan_hash, const SlurmJobSettings& settings) {
  std::string s = "#SBATCH --job-name=" + sweep_job_name(plan_hash) + "\n";
  if (!settings.partition.empty()) s += "#SBATCH --partition=" + settings.partition + "\n";
  if (!settings.time.empty()) s += "#SBATCH --time=" + settings.time + "\n";
  return s;
}

}  // namespace

std::string shard_array_script(const SlurmSweepFiles& files, const std::string& plan_hash, int shard_count,
                               const std::vector<int>& indices, const SlurmJobSettings& settings,
                               const std::vector<std::string>& compare_args) {
  const std::string n = std::to_string(shard_count);
  std::string s = "#!/bin/bash\n";
  s += common_directives(plan_hash, settings);
  s += "#SBATCH --array=" + array_indices(indices) + "\n";
  s += "#SBATCH --output=" + files.logs() + "/shard-%a-job%A.out\n";
  if (!settings.gres.empty()) s += "#SBATCH --gres=" + settings.gres + "\n";
  s += "# Shard SLURM_ARRAY_TASK_ID of " + n + " of plan " + plan_hash.substr(0, 12) +
       ": runs its share of the items, rewriting its\n"
       "# results file after each one, and skips the items a previous attempt finished.\n";
  s += "set -eu\n";
  s += "exec " + shell_quote(files.convbench) + " compare " + shell_quote(files.spec) + " --plan " +
       shell_quote(files.plan()) + " --shard /" + n + " --json " + shell_quote(files.dir) +
       "\"/shard-${SLURM_ARRAY_TASK_ID}.json\" -q";
  for (const std::string& a : compare_args) s += " " + shell_quote(a);
  return s + "\n";
}

std::string merge_job_script(const SlurmSweepFiles& files, const std::string& plan_hash, int shard_count,
                             const SlurmJobSettings& settings) {
  std::string s = "#!/bin/bash\n";
  s += common_directives(plan_hash, settings);
  s += "#SBATCH --output=" + files.logs() + "/merge-job%j.out\n";
  s += "# Runs after every shard task ended (afterany: a failed shard must not cancel it), merges\n"
       "# what the shards wrote, and lists the missing items and the shards to rerun (exit 1).\n";
  s += "set -u\n";
  // Shards 0..N-1 only: a shard-9.json left by an earlier split into more shards is not this one's.
  s += "shards=()\n";
  s += "for ((i = 0; i < " + std::to_string(shard_count) + "; i++)); do\n";
  s += "  f=" + shell_quote(files.dir) + "\"/shard-$i.json\"\n";
  s += "  if [ -f \"$f\" ] && [ ! -L \"$f\" ]; then shards+=(\"$f\"); fi\n";
  s += "done\n";
  s += "if [ ${#shards[@]} -eq 0 ]; then\n";
  s += "  echo \"convbench merge: no shard wrote results in \"" + shell_quote(files.dir) + " >&2\n";
  s += "  exit 1\n";
  s += "fi\n";
  s += "exec " + shell_quote(files.convbench) + " merge \"${shards[@]}\" -o " + shell_quote(files.merged()) + "\n";
  return s;
}

}  // namespace convbench

// Each subcommand registers itself on the CLI and runs when chosen. Commands return the process
// exit code; bad input throws InputError, which main() turns into exit code 2.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace convbench::cli {

struct Command {
  CLI::App* sub;
  std::function<int()> run;
};

Command add_analyze_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_verify_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_advise_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_slurm_command(CLI::App& app);
Command add_history_command(CLI::App& app);
// Prints a completion script for every command registered on `app` (read when it runs).
Command add_completion_command(CLI::App& app);

// "convbench 0.1.0 (commit ...)" and the backends this binary was built with.
std::string version_text();

}  // namespace convbench::cli

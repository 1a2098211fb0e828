// convbench: benchmark convolution block variants. One file per subcommand (cmd_*.cpp).
#include <cstdio>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>

#include "commands.hpp"
#include "output_options.hpp"
#include "util/input_error.hpp"
#include "util/markup_escape.hpp"

int main(int argc, char** argv) {
  CLI::App app{"convbench: which convolution block variant is really fastest and leanest, and why"};
  app.require_subcommand(1);
  app.fallthrough();  // -v works after the subcommand too
  app.set_version_flag("--version", convbench::cli::version_text());
  int verbosity = 0;
  app.add_flag("-v", verbosity, "More logging (-v info, -vv debug)");
  std::string color = "auto";
  app.add_option(convbench::cli::kColorOption, color,
                 "Colour in terminal output: auto (on a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();

  const std::vector<convbench::cli::Command> commands = {
      convbench::cli::add_analyze_command(app),   convbench::cli::add_compare_command(app),
      convbench::cli::add_report_command(app),    convbench::cli::add_diff_command(app),
      convbench::cli::add_validate_command(app),  convbench::cli::add_list_command(app),
      convbench::cli::add_verify_command(app),    convbench::cli::add_explain_command(app),
      convbench::cli::add_advise_command(app),    convbench::cli::add_plan_command(app),
      convbench::cli::add_merge_command(app),     convbench::cli::add_slurm_command(app),
      convbench::cli::add_history_command(app),   convbench::cli::add_export_command(app),
      convbench::cli::add_completion_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Every usage error exits 2 with one line, like every other bad input.
    std::fprintf(stderr, "error: command line: %s (see --help)\n", convbench::printable(e.what()).c_str());
    return 2;
  }
  // Logs and warnings on stderr: stdout carries only what was asked for (tables, `-` outputs),
  // so `compare ... > table.txt` gets no log lines.
  auto logger = spdlog::stderr_color_mt("convbench");
  const bool colour = convbench::cli::colour_wanted(color, ::isatty(STDERR_FILENO) == 1, std::getenv("NO_COLOR"));
  if (auto* sink = dynamic_cast<spdlog::sinks::stderr_color_sink_mt*>(logger->sinks().front().get()))
    sink->set_color_mode(colour ? spdlog::color_mode::always : spdlog::color_mode::never);
  spdlog::set_default_logger(logger);
  spdlog::set_level(verbosity >= 2 ? spdlog::level::debug : verbosity == 1 ? spdlog::level::info : spdlog::level::warn);
  spdlog::set_pattern("[%^%l%$] %v");
  try {
    for (const auto& command : commands)
      if (command.sub->parsed()) return command.run();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of host memory\n");
    return 2;
  } catch (const std::exception& e) {
    // One line, control characters shown escaped: the message may quote the input.
    std::fprintf(stderr, "error: %s\n", convbench::printable(e.what()).c_str());
    return 2;
  }
  return 2;
}

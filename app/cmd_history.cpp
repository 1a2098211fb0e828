// convbench history add|list|show|check|export|report|site|integrity: the results history (lib/history), an
// SQLite file or a PostgreSQL URI (postgresql://...) at --db, else $CONVBENCH_DB, else
// convbench-history.sqlite in the working directory.
// Flags only: the work is in lib/history. Exit codes: check as diff (0 no regression, 1
// regression, 3 ambiguous slowdown); 2 for bad input, a database that is locked, read-only,
// corrupt or from a newer convbench (nothing is then written).
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "history/history_check.hpp"
#include "history/history_db.hpp"
#include "history/history_export.hpp"
#include "history/history_file.hpp"
#include "history/history_site.hpp"
#include "history/history_store.hpp"
#include "history/history_tables.hpp"
#include "history/trend_report.hpp"
#include "option_checks.hpp"
#include "util/input_error.hpp"
#include "util/markup_escape.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {
namespace {

std::string default_db() {
  const char* env = std::getenv("CONVBENCH_DB");
  return env && *env ? env : "convbench-history.sqlite";
}

void add_db_option(CLI::App& sub, std::string& db, double& busy_timeout_s) {
  sub.add_option("--db", db,
                 "History database: an SQLite file, or postgresql://USER@HOST/DB for a team's server (default: "
                 "$CONVBENCH_DB, else convbench-history.sqlite)");
  sub.add_option("--busy-timeout", busy_timeout_s,
                 "Seconds to wait for another process that is writing the database before giving up (exit 2)")
      ->check(finite_in(0, 86400))
      ->capture_default_str();
}

void add_step_option(CLI::App& sub, StepFitOptions& step) {
  sub.add_option("--step-penalty", step.penalty_per_log_n,
                 "Step fit: penalty per level change, in noise variances per log(runs)")
      ->check(finite_in(0.1, 1e6))
      ->capture_default_str();
}

}  // namespace

Command add_history_command(CLI::App& app) {
  struct Options {
    std::string db;
    std::vector<std::string> files;
    std::string results, filter, output = "-", format = "csv", html, site_dir;
    int last = 0;
    double busy_s = kHistoryBusyTimeoutMs / 1000.0;
    bool add_after_check = false;
    CheckOptions check;
    StepFitOptions step;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "history",
      "Keep every run in a history (an SQLite file, or a team's PostgreSQL): trends per series and device, "
      "regressions against history");
  sub->require_subcommand(1);

  CLI::App* add = sub->add_subcommand("add", "Add results files to the history (one transaction: all or none)");
  add->add_option("results", opt->files, "Results JSON files (convbench compare --json)")->required();
  add_db_option(*add, opt->db, opt->busy_s);

  CLI::App* list = sub->add_subcommand("list", "List the series with their run counts");
  add_db_option(*list, opt->db, opt->busy_s);
  list->add_option("--filter", opt->filter, "Only series whose \"block [point] / variant\" or device matches (regex)");

  CLI::App* show =
      sub->add_subcommand("show", "A table per series: the median, its quartiles and level changes, run by run");
  add_db_option(*show, opt->db, opt->busy_s);
  show->add_option("--filter", opt->filter, "Only series whose \"block [point] / variant\" or device matches (regex)");
  show->add_option("--last", opt->last, "Show only the last N runs of each series (0: all)")
      ->check(CLI::Range(0, 1 << 30));
  add_step_option(*show, opt->step);

  CLI::App* check = sub->add_subcommand("check",
                                        "Judge a new run against the recent history of each series (exit 0 ok, 1 "
                                        "regression, 3 ambiguous, 4 something not judged, 2 bad input)");
  check->add_option("results", opt->results, "Results JSON of the new run")->required();
  add_db_option(*check, opt->db, opt->busy_s);
  check->add_option("--last", opt->check.last, "History window: the last N runs of each series")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  check->add_option("--min-runs", opt->check.min_runs, "Fewest usable runs in the window for a verdict")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  check
      ->add_option("--fdr", opt->check.fdr,
                   "False discovery rate over the series of the run (Benjamini-Hochberg level of the rank tests)")
      ->check(finite_in(1e-12, 0.5))
      ->capture_default_str();
  check
      ->add_option("--time-threshold", opt->check.time_threshold,
                   "Smallest relative change of the median that counts (raised to 3x the run-to-run spread)")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  check->add_option("--memory-threshold", opt->check.memory_threshold, "Relative change of peak memory that counts")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  check->add_flag("--judge-disturbed", opt->check.judge_disturbed, "Judge a new row flagged disturbed anyway");
  check->add_flag("--accept-unjudged", opt->check.accept_unjudged,
                  "Exit 0 instead of 4 when a row could not be judged (a new series, too few runs, a disturbed or "
                  "untimed row): accept it explicitly, as a first run of a CI gate must");
  check->add_flag("--add", opt->add_after_check, "Add the run to the history after judging it");
  add_step_option(*check, opt->check.step);

  CLI::App* exp =
      sub->add_subcommand("export", "Every measurement with its series and run, as CSV or JSON (for pandas)");
  add_db_option(*exp, opt->db, opt->busy_s);
  exp->add_option("--format", opt->format, "csv or json")->check(CLI::IsMember({"csv", "json"}))->capture_default_str();
  exp->add_option("-o,--output", opt->output, "Output file (- for standard output)")->capture_default_str();
  exp->add_option("--filter", opt->filter, "Only series whose \"block [point] / variant\" or device matches (regex)");

  CLI::App* report = sub->add_subcommand("report", "A self-contained HTML page: one trend plot per series, by device");
  add_db_option(*report, opt->db, opt->busy_s);
  report->add_option("--html", opt->html, "The page to write (- for standard output)")->required();
  report->add_option("--filter", opt->filter,
                     "Only series whose \"block [point] / variant\" or device matches (regex)");
  add_step_option(*report, opt->step);

  CLI::App* site = sub->add_subcommand(
      "site",
      "A static site in DIR (plain files, no scripts): an index of every series with sparklines and latest level "
      "changes, a page per series (trend, level changes, runs) and per commit");
  add_db_option(*site, opt->db, opt->busy_s);
  site->add_option("dir", opt->site_dir, "The folder to write the site into (made if missing)")->required();
  site->add_option("--filter", opt->filter, "Only series whose \"block [point] / variant\" or device matches (regex)");
  add_step_option(*site, opt->step);

  CLI::App* integrity = sub->add_subcommand(
      "integrity",
      "Check every page and index of the history (SQLite's integrity_check; on a server, its references and "
      "amcheck where installed) (exit 0 intact, 1 damaged)");
  add_db_option(*integrity, opt->db, opt->busy_s);

  return {sub, [opt, add, list, show, check, exp, report, site, integrity] {
            const std::string db = opt->db.empty() ? default_db() : opt->db;
            const std::string shown = history_display_name(db);  // a server's password is never printed
            const int busy_ms = static_cast<int>(opt->busy_s * 1000.0);
            if (add->parsed()) {
              std::vector<HistoryRun> runs;  // every file read and checked before the database is opened
              for (const std::string& f : opt->files) runs.push_back(history_run_from_file(f));
              const AddSummary s = add_runs(db, runs, busy_ms);
              for (const std::string& line : s.skipped) std::cerr << "note: " << line << "\n";
              std::cout << "added " << s.runs_added << " run(s), " << s.measurements << " measurement(s), "
                        << s.new_series << " new series to " << shown << "\n";
              return 0;
            }
            if (check->parsed()) {
              const HistoryRun run = history_run_from_file(opt->results);
              // CI's first run: with --add, a history that does not exist yet is created empty
              // (every series is then new). Without --add a missing file stays an error, so that a
              // mistyped --db cannot pass every check against nothing.
              if (opt->add_after_check && history_to_create_first(db)) add_runs(db, {}, busy_ms);
              CheckReport result;
              {
                HistoryReader history(db, busy_ms);
                result = check_run(history, run, opt->check);
              }
              std::cout << format_check(result);
              if (opt->add_after_check) {
                const AddSummary s = add_runs(db, {run}, busy_ms);
                std::cerr << (s.runs_added ? "added the run to " + shown : "the run was already in " + shown) << "\n";
              }
              return result.exit_code();
            }
            if (report->parsed() || exp->parsed()) {
              const OutputPath out = report->parsed() ? OutputPath{opt->html, "--html"} : OutputPath{opt->output, "-o"};
              // The history is an input, compared as the file it is (a URI, ./h.sqlite, a link).
              const std::vector<std::string> db_files = history_input_files(db);
              check_output_paths({out}, db_files);
              HistoryReader history(db, busy_ms);
              const std::string text = report->parsed() ? format_trend_report(history, opt->filter, opt->step)
                                                        : export_history(history, opt->format, opt->filter);
              write_output_files({{out, text}}, db_files);
              return 0;
            }
            if (site->parsed()) {
              const std::vector<std::string> db_files = history_input_files(db);
              const std::filesystem::path dir(opt->site_dir);
              std::error_code ec;
              const std::filesystem::file_status status = std::filesystem::symlink_status(dir, ec);
              if (std::filesystem::exists(status) && !std::filesystem::is_directory(status))
                throw InputError({opt->site_dir, 0, 0}, "DIR", "exists and is not a folder: the site needs a folder");
              HistoryReader history(db, busy_ms);
              std::vector<OutputFile> files;
              for (SiteFile& f : history_site(history, opt->filter, opt->step))
                files.push_back({{(dir / f.name).string(), "DIR"}, std::move(f.content)});
              std::vector<OutputPath> paths;
              for (const OutputFile& f : files) paths.push_back(f.where);
              // Every page is checked before the folder is made, so a refusal leaves nothing behind.
              if (std::filesystem::is_directory(dir, ec)) check_output_paths(paths, db_files);
              if (!std::filesystem::create_directories(dir, ec) && ec)
                throw InputError({opt->site_dir, 0, 0}, "DIR", "cannot make the folder: " + ec.message());
              write_output_files(files, db_files);
              std::cout << "wrote " << files.size() << " pages to " << printable(opt->site_dir) << " (open "
                        << printable((dir / "index.html").string()) << ")\n";
              return 0;
            }
            if (integrity->parsed()) {
              const IntegrityReport r = check_history_integrity(db, busy_ms);
              for (const std::string& p : r.problems) std::cout << shown << ": " << p << "\n";
              if (!r.problems.empty()) {
                std::cout << shown << ": damaged: " << r.problems.size() << (r.problems.size() >= 100 ? " or more" : "")
                          << " problem(s); restore it from a backup\n";
                return 1;
              }
              std::cout << shown << ": intact (" << r.runs << " run(s), " << r.series << " series, " << r.measurements
                        << " measurement(s))\n";
              return 0;
            }
            HistoryReader history(db, busy_ms);
            if (list->parsed()) std::cout << format_series_list(history, opt->filter);
            if (show->parsed()) std::cout << format_series_trends(history, opt->filter, opt->last, opt->step);
            return 0;
          }};
}

}  // namespace convbench::cli

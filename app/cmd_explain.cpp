// convbench explain SPEC: runs every variant like `compare` (with per-op timing) and says what
// each one's time and memory are made of, against the baseline and the device's limits
// (pipeline/explain.hpp builds it, explain/ holds the facts, the rules and the renderers).
#include <iostream>

#include "commands.hpp"
#include "explain/explanation_output.hpp"
#include "measurement_options.hpp"
#include "option_checks.hpp"
#include "output_options.hpp"
#include "pipeline/explain.hpp"
#include "report/report_formats.hpp"
#include "results/device_limits.hpp"
#include "spec/spec_filter.hpp"
#include "spec/spec_loader.hpp"
#include "util/input_error.hpp"
#include "util/json_text.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {
namespace {

std::string render_explanation(const Explanation& e, const std::string& format) {
  if (format == "md") return explanation_markdown(e);
  if (format == "html") return explanation_html(e);
  if (format == "json") return json_text(explanation_json(e), 2) + "\n";
  return explanation_text(e);
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  struct Options {
    std::string spec;
    ExplainOptions explain;
    std::string memory_limit = "0";
    SpecLimits limits;
    std::string filter;
    std::string json, markdown, html, results_json;
    std::string format = "text";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Run every variant (with per-op timing) and say why it is faster or slower, leaner or fatter than the baseline: "
      "each op's time, FLOPs, bytes and bound, the saved tensors by op, the launches");
  sub->add_option("spec", opt->spec,
                  "Block spec file (.yaml, .yml or .json; - reads standard input), or an ONNX model file (.onnx)")
      ->required();
  add_measurement_options(*sub, opt->explain.compare, opt->memory_limit);
  sub->add_option("--json", opt->json, "Write the explanation as JSON (every fact and sentence) to this file");
  sub->add_option("--markdown", opt->markdown, "Write the explanation as Markdown");
  sub->add_option("--html", opt->html, "Write the explanation as a self-contained HTML page");
  sub->add_option("--results-json", opt->results_json,
                  "Also write the results JSON of the run (per-op times included), for report and diff");
  sub->add_option("--format", opt->format, "What standard output shows: text | md | html | json")
      ->check(CLI::IsMember({"text", "md", "html", "json"}))
      ->capture_default_str();
  sub->add_option("--peak-flops", opt->explain.limits.peak_flops,
                  "The device's peak FLOP/s (e.g. 19.5T), instead of the measured (cpu) or datasheet (cuda) one; with "
                  "--bandwidth")
      ->transform(decimal_units())
      ->check(finite_in(kMinPeakFlops, kMaxPeakFlops));
  sub->add_option("--bandwidth", opt->explain.limits.bandwidth,
                  "The device's memory bandwidth in bytes/s (e.g. 1.6T); with --peak-flops")
      ->transform(decimal_units())
      ->check(finite_in(kMinBandwidth, kMaxBandwidth));
  sub->add_option("--limits", opt->explain.limits.device_name, limits_device_help());
  sub->add_flag("--calibrate", opt->explain.limits.calibrate,
                "cpu: measure the peak FLOP/s and bandwidth again instead of using the cached measurement");
  sub->add_option("--limits-cache", opt->explain.limits.cache_path,
                  "The file the cpu's measured limits are cached in (default: $CONVBENCH_CACHE_DIR/device-limits.json, "
                  "else $XDG_CACHE_HOME/convbench/..., else ~/.cache/convbench/...)");
  add_spec_limit_option(*sub, opt->limits);
  sub->add_option("--filter", opt->filter,
                  "Explain only the variants whose \"block/variant\" matches this regular expression (each block's "
                  "baseline stays)");
  return {sub, [opt] {
            const LimitsRequest& l = opt->explain.limits;
            check_limits_device(l.device_name, l.peak_flops, l.bandwidth);
            if ((l.peak_flops > 0) != (l.bandwidth > 0))
              throw InputError({"command line", 0, 0}, l.peak_flops > 0 ? "--bandwidth" : "--peak-flops",
                               "the device's limits need both --peak-flops and --bandwidth");
            const std::vector<OutputPath> paths = {{opt->json, "--json"},
                                                   {opt->markdown, "--markdown"},
                                                   {opt->html, "--html"},
                                                   {opt->results_json, "--results-json"}};
            check_output_paths(paths, {opt->spec});
            check_one_format_on_stdout(paths, opt->format, "text");
            opt->explain.compare.backend.memory_limit_bytes = parse_byte_size(opt->memory_limit, "--memory-limit");
            Spec spec = load_spec_file(opt->spec, opt->limits);
            if (!opt->filter.empty()) filter_spec(spec, opt->filter);
            const ExplainRun run = explain(spec, opt->explain, std::cerr);
            std::vector<OutputFile> files;
            if (!opt->json.empty()) files.push_back({paths[0], render_explanation(run.explanation, "json")});
            if (!opt->markdown.empty()) files.push_back({paths[1], render_explanation(run.explanation, "md")});
            if (!opt->html.empty()) files.push_back({paths[2], render_explanation(run.explanation, "html")});
            if (!opt->results_json.empty()) files.push_back({paths[3], render_results(run.results, "json", false, {})});
            write_files_else_stdout(files, {opt->spec},
                                    [&] { return render_explanation(run.explanation, opt->format); });
            return 0;
          }};
}

}  // namespace convbench::cli

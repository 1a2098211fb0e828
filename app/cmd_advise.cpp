// convbench advise SPEC: for each of the user's variants (--variant, default each block's
// baseline), tries every change that applies (memory policies, the other layout with and
// without the boundary conversion, folding, other thread counts on a CPU), measures each against
// the variant as written in the same run, round by round, and ranks what each buys
// (pipeline/advise.hpp measures, report/advice_output.hpp prints).
#include <iostream>

#include "commands.hpp"
#include "measurement_options.hpp"
#include "option_checks.hpp"
#include "output_options.hpp"
#include "pipeline/advise.hpp"
#include "report/advice_output.hpp"
#include "spec/spec_loader.hpp"
#include "util/json_text.hpp"
#include "util/output_writer.hpp"

namespace convbench::cli {
namespace {

std::string render_advice(const Advice& a, const std::string& format) {
  if (format == "md") return advice_markdown(a);
  if (format == "json") return json_text(advice_json(a), 2) + "\n";
  return advice_text(a);
}

}  // namespace

Command add_advise_command(CLI::App& app) {
  struct Options {
    std::string spec;
    AdviseOptions advise;
    std::string memory_limit = "0";
    SpecLimits limits;
    std::string json, markdown;
    std::string format = "text";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("advise",
                         "Try what applies to your variant (memory policies, layouts, folding, precisions, thread "
                         "counts), measure each against "
                         "it as written, and rank what each buys in time and peak, with the spec lines to use it");
  sub->add_option("spec", opt->spec,
                  "Block spec file (.yaml, .yml or .json; - reads standard input), or an ONNX model file (.onnx)")
      ->required();
  sub->add_option("--variant", opt->advise.variants,
                  "Your variant, by name (repeat for several; default: each block's baseline)");
  sub->add_option("--rounds", opt->advise.rounds,
                  "Measure everything this many times, alternating the order, and judge each change round by round")
      ->check(CLI::Range(1, kMaxAdviceRounds))
      ->capture_default_str();
  sub->add_option("--time-threshold", opt->advise.time_threshold,
                  "Relative change of time that counts (as diff: the quartiles must separate too)")
      ->check(finite_in(0, 10))
      ->capture_default_str();
  sub->add_option("--memory-threshold", opt->advise.memory_threshold, "Relative change of peak memory that counts")
      ->check(finite_in(0, 10))
      ->capture_default_str();
  add_measurement_options(*sub, opt->advise.compare, opt->memory_limit);
  sub->add_option("--json", opt->json, "Write the advice as JSON (every round's figures) to this file");
  sub->add_option("--markdown", opt->markdown, "Write the advice as Markdown");
  sub->add_option("--format", opt->format, "What standard output shows: text | md | json")
      ->check(CLI::IsMember({"text", "md", "json"}))
      ->capture_default_str();
  add_spec_limit_option(*sub, opt->limits);
  return {sub, [opt] {
            const std::vector<OutputPath> paths = {{opt->json, "--json"}, {opt->markdown, "--markdown"}};
            check_output_paths(paths, {opt->spec});
            check_one_format_on_stdout(paths, opt->format, "text");
            opt->advise.compare.backend.memory_limit_bytes = parse_byte_size(opt->memory_limit, "--memory-limit");
            const Spec spec = load_spec_file(opt->spec, opt->limits);
            const Advice advice = advise(spec, opt->advise, std::cerr);
            std::vector<OutputFile> files;
            if (!opt->json.empty()) files.push_back({paths[0], render_advice(advice, "json")});
            if (!opt->markdown.empty()) files.push_back({paths[1], render_advice(advice, "md")});
            write_files_else_stdout(files, {opt->spec}, [&] { return render_advice(advice, opt->format); });
            return 0;
          }};
}

}  // namespace convbench::cli

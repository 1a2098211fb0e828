// convbench list: the variant kinds, their parameters and op sequences; the GPUs whose datasheet
// limits --limits NAME takes, with their sources.
#include <iostream>

#include "commands.hpp"
#include "results/gpu_datasheets.hpp"
#include "spec/block_kind_registry.hpp"
#include "util/text_table.hpp"

namespace convbench::cli {
namespace {

std::string tflops(double flops) { return flops > 0 ? format_significant(flops / 1e12, 3) : "-"; }

// The datasheet table, then each row's source and note (too long for a column).
std::string datasheets_text() {
  TextTable t;
  t.header = {"--limits", "GPU", "float32", "tf32", "float16", "bfloat16", "GB/s"};
  t.right_aligned = {false, false, true, true, true, true, true};
  std::string sources;
  for (const GpuDatasheet& d : gpu_datasheets()) {
    t.rows.push_back({d.name, d.title, tflops(d.float32), tflops(d.tf32), tflops(d.float16), tflops(d.bfloat16),
                      format_fixed(d.bandwidth_bytes_per_s / 1e9, 0)});
    sources += "  " + d.name + ": " + d.source + "; " + d.note + "\n";
  }
  return "\nGPU datasheets for --limits NAME (explain, compare, analyze, report): dense peak TFLOP/s per dtype, "
         "memory bandwidth\n" +
         t.render_terminal() + "\n" + sources;
}

}  // namespace

Command add_list_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "list", "List variant kinds with their parameters and op sequences, and the GPU datasheets --limits takes");
  return {
      sub, [] {
        TextTable t;
        t.header = {"kind", "parameters (default)", "op sequence"};
        t.right_aligned = {false, false, false};
        for (const BlockKindDefinition* k : block_kinds())
          t.rows.push_back({std::string(k->name), k->parameters_doc, k->ops_doc});
        std::cout << t.render_terminal()
                  << "\nCNA = conv -> norm (block `norm`) -> act (block `act`). Dropout (block `dropout` > 0) ends\n"
                     "the main path; `residual: true` adds a shortcut (identity, or conv1x1 -> norm when\n"
                     "channels or stride change) with no activation after the add.\n"
                  << datasheets_text();
        return 0;
      }};
}

}  // namespace convbench::cli

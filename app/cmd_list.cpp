// convbench list: the variant kinds, their parameters and op sequences.
#include <iostream>

#include "commands.hpp"
#include "report/text_table.hpp"
#include "spec/block_kind_registry.hpp"

namespace convbench::cli {

Command add_list_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("list", "List variant kinds with their parameters and op sequences");
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
                     "channels or stride change) with no activation after the add.\n";
        return 0;
      }};
}

}  // namespace convbench::cli

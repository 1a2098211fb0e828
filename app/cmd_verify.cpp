// convbench verify SPEC DUMP_DIR: outputs and every gradient of convbench's backend against
// PyTorch's, on the same inputs and weights (dumps from `scripts/torch_peer.py --dump-tensors`).
#include <filesystem>
#include <iostream>

#include "backends/backend_registry.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "measure/peer_check.hpp"
#include "report/json_reader.hpp"
#include "report/text_table.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::cli {

Command add_verify_command(CLI::App& app) {
  struct Options {
    std::string spec, dumps, device = "cpu";
    double tolerance = -1;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Check outputs and gradients against PyTorch tensor dumps (scripts/torch_peer.py --dump-tensors)");
  sub->add_option("spec", opt->spec, "The spec the dumps were made from")->required();
  sub->add_option("dumps", opt->dumps, "Folder of dumps")->required();
  sub->add_option("--device", opt->device, "cpu | reference (reference computes in float64)")
      ->check(CLI::IsMember({"cpu", "reference"}))
      ->capture_default_str();
  sub->add_option("--tolerance", opt->tolerance,
                  "Largest relative error ||ours - torch|| / ||torch|| (default 1e-4 on cpu, 1e-9 on reference)")
      ->check(finite_in(1e-300, 1));
  return {sub, [opt] {
            const Spec spec = load_spec_file(opt->spec);
            if (!std::filesystem::is_directory(opt->dumps))
              throw SpecError({opt->dumps, 0, 0}, "", "not a folder of tensor dumps");
            const double tol = opt->tolerance > 0 ? opt->tolerance : opt->device == "reference" ? 1e-9 : 1e-4;
            std::unique_ptr<Backend> backend = make_backend(opt->device);
            TextTable t;
            t.header = {"block", "point", "variant", "tensors", "worst rel. error", "worst tensor", "status"};
            t.right_aligned = {false, false, false, true, true, false, false};
            int failures = 0, checked = 0;
            for (const BlockSpec& block : spec.blocks) {
              if (block.mode != RunMode::train) continue;  // the peer dumps training steps only
              for (const VariantSpec& v : block.variants) {
                const std::string path = opt->dumps + "/" + peer_dump_file_name(block, v);
                DumpCheck c;
                c.block = block.name;
                c.variant = v.name;
                c.point_label = point_label(block);
                if (!std::filesystem::exists(path)) {
                  c.status = "missing";
                  c.message = path;
                } else {
                  const nlohmann::json dump =
                      parse_json_input(read_input_file(path, "tensor dump", kMaxDumpBytes), "tensor dump");
                  try {
                    c = check_against_dump(block, v, dump, *backend, tol);
                  } catch (const nlohmann::json::exception& e) {
                    throw SpecError({path, 0, 0}, "", std::string("malformed tensor dump: ") + e.what());
                  }
                  backend->allocator().release_cached();
                }
                const TensorAgreement* worst = nullptr;
                for (const TensorAgreement& a : c.tensors)
                  if (!worst || a.rel_error > worst->rel_error) worst = &a;
                const bool ok = c.status == "ok" || c.status == "unsupported";
                failures += ok ? 0 : 1;
                checked += c.status == "ok" ? 1 : 0;
                char err[32];
                std::snprintf(err, sizeof err, "%.2e", worst ? worst->rel_error : 0.0);
                t.rows.push_back({c.block, c.point_label, c.variant, std::to_string(c.tensors.size()),
                                  worst ? err : "-", worst ? worst->name : "-",
                                  c.status + (c.message.empty() ? "" : ": " + c.message)});
              }
            }
            std::cout << t.render_terminal() << checked << " variants agree with PyTorch within " << tol << " on "
                      << backend->name() << "; " << failures << " failed\n";
            return failures ? 1 : 0;
          }};
}

}  // namespace convbench::cli

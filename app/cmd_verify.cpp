// convbench verify SPEC DUMP_DIR: the flags of the verify pipeline (pipeline/verify.hpp): outputs
// and every gradient of convbench's backend against PyTorch's tensor dumps.
#include <iostream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "pipeline/verify.hpp"
#include "spec/spec_loader.hpp"

namespace convbench::cli {

Command add_verify_command(CLI::App& app) {
  struct Options {
    std::string spec, dumps;
    SpecLimits limits;
    VerifyOptions verify;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Check outputs and gradients against PyTorch tensor dumps (scripts/torch_peer.py --dump-tensors)");
  sub->add_option("spec", opt->spec, "The spec the dumps were made from")->required();
  sub->add_option("dumps", opt->dumps, "Folder of dumps")->required();
  sub->add_option("--device", opt->verify.device,
                  "cpu | reference (reference computes in float64, an AMP step in its own dtypes)")
      ->check(CLI::IsMember({"cpu", "reference"}))
      ->capture_default_str();
  sub->add_option(
         "--tolerance", opt->verify.tolerance,
         "Largest relative error ||ours - torch|| / ||torch|| (default 1e-4 on cpu, 1e-9 on reference; 5e-2 for an "
         "AMP variant's step)")
      ->check(finite_in(1e-300, 1));
  // --sweep and --input as the peer took them, so that the same rows are checked.
  add_spec_limit_option(*sub, opt->limits);
  return {sub, [opt] {
            const Spec spec = load_spec_file(opt->spec, opt->limits);
            const Verification v = verify(spec, opt->dumps, opt->verify);
            std::cout << format_verification(v);
            return v.failures() ? 1 : 0;
          }};
}

}  // namespace convbench::cli

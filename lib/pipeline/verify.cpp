#include "pipeline/verify.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "backends/backend_registry.hpp"
#include "results/json_reader.hpp"
#include "util/input_error.hpp"
#include "util/input_file.hpp"
#include "util/join.hpp"
#include "util/text_table.hpp"

namespace convbench {

int Verification::failures() const {
  int n = 0;
  for (const DumpCheck& c : checks) n += c.status != DumpCheckStatus::ok && c.status != DumpCheckStatus::unsupported;
  return n;
}

int Verification::agreeing() const {
  int n = 0;
  for (const DumpCheck& c : checks) n += c.status == DumpCheckStatus::ok;
  return n;
}

double default_tolerance(const std::string& device, Precision precision) {
  if (precision != Precision::plain) return 5e-2;
  return device == "reference" ? 1e-9 : 1e-4;
}

Verification verify(const Spec& spec, const std::string& dump_dir, const VerifyOptions& options) {
  if (!std::filesystem::is_directory(dump_dir)) throw InputError({dump_dir, 0, 0}, "", "not a folder of tensor dumps");
  Verification out;
  std::unique_ptr<Backend> backend = make_backend(options.device);
  out.device = backend->name();
  for (const BlockSpec& block : spec.blocks) {
    for (const VariantSpec& v : block.variants) {
      const std::string path = dump_dir + "/" + peer_dump_file_name(block, v);
      // PyTorch's peer dumps training steps only; an inference block is checked where the folder
      // has a dump for it (ONNX Runtime's forward: tests/onnx_runtime_peer_test.py).
      if (block.mode != RunMode::train && !std::filesystem::exists(path)) continue;
      DumpCheck c;
      c.block = block.name;
      c.variant = v.name;
      c.point_label = point_label(block);
      const Precision precision = precision_of(block, v).precision;
      c.tolerance = options.tolerance > 0 ? options.tolerance : default_tolerance(options.device, precision);
      if (!std::filesystem::exists(path)) {
        c.status = DumpCheckStatus::missing;
        c.message = path;
      } else {
        const nlohmann::json dump =
            parse_json_input(read_input_file(path, "tensor dump", kMaxDumpBytes), "tensor dump");
        try {
          c = check_against_dump(block, v, dump, *backend, c.tolerance);
        } catch (const nlohmann::json::exception& e) {
          throw InputError({path, 0, 0}, "", std::string("malformed tensor dump: ") + e.what());
        }
        backend->allocator().release_cached();
      }
      out.checks.push_back(std::move(c));
    }
  }
  return out;
}

namespace {

std::string scientific(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2e", v);
  return text;
}

}  // namespace

std::string format_verification(const Verification& v) {
  TextTable t;
  t.header = {"block", "point", "variant", "tensors", "worst rel. error", "worst tensor", "status"};
  t.right_aligned = {false, false, false, true, true, false, false};
  for (const DumpCheck& c : v.checks) {
    const TensorAgreement* worst = nullptr;
    for (const TensorAgreement& a : c.tensors)
      if (!worst || a.rel_error > worst->rel_error) worst = &a;
    t.rows.push_back({c.block, c.point_label, c.variant, std::to_string(c.tensors.size()),
                      worst ? scientific(worst->rel_error) : "-", worst ? worst->name : "-",
                      to_string(c.status) + (c.message.empty() ? "" : ": " + c.message)});
  }
  // The peer the dumps name (PyTorch unless an ONNX Runtime dump says otherwise).
  std::set<std::string> peers;
  for (const DumpCheck& c : v.checks)
    if (c.status != DumpCheckStatus::missing) peers.insert(c.peer);
  // The tolerances the checks allowed, each once: "1e-09", or "1e-09 (plain) and 0.05 (AMP)".
  std::vector<double> tolerances;
  for (const DumpCheck& c : v.checks)
    if (std::find(tolerances.begin(), tolerances.end(), c.tolerance) == tolerances.end())
      tolerances.push_back(c.tolerance);
  std::sort(tolerances.begin(), tolerances.end());
  std::vector<std::string> within;
  for (const double tol : tolerances) {
    std::ostringstream one;
    one << tol;
    if (tolerances.size() > 1) one << (tol == default_tolerance(v.device, Precision::plain) ? " (plain)" : " (AMP)");
    within.push_back(one.str());
  }
  std::ostringstream out;
  out << t.render_terminal();
  // Tensors that agree only by being as close to exact arithmetic as the peer's: said, with both
  // distances, so that a reader sees where the peer itself is off.
  for (const DumpCheck& c : v.checks)
    for (const TensorAgreement& a : c.tensors)
      if (a.ok && a.ours_from_truth && a.peer_from_truth)
        out << c.block << (c.point_label.empty() ? "" : " [" + c.point_label + "]") << " / " << c.variant << ": "
            << a.name << " differs from " << c.peer << "'s by " << scientific(a.rel_error)
            << ", beyond the tolerance, but "
            << (a.truth_slack == 1
                    ? "is " + scientific(*a.ours_from_truth) + " from the float64 step, where " + c.peer + "'s is " +
                          scientific(*a.peer_from_truth) + ": convbench's is the closer to exact arithmetic (agrees)\n"
                    : "that is within " + std::to_string(static_cast<int>(a.truth_slack)) + " times " + c.peer +
                          "'s own float32 step's distance from its float64 one, " + scientific(*a.peer_from_truth) +
                          " (agrees)\n");
  out << v.agreeing() << " variants agree with "
      << (peers.empty() ? std::string("PyTorch") : join(std::vector<std::string>(peers.begin(), peers.end()), " and "))
      << " within " << (within.empty() ? std::string("-") : join(within, " and ")) << " on " << v.device << "; "
      << v.failures() << " failed\n";
  return out.str();
}

}  // namespace convbench

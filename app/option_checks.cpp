#include "option_checks.hpp"

#include <cctype>
#include <cmath>
#include <map>
#include <string_view>

#include "results/gpu_datasheets.hpp"
#include "util/input_error.hpp"

namespace convbench::cli {

CLI::Validator finite_in(double lo, double hi) {
  const std::string range = "[" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          return "expected a number in " + range + ", got " + text;
        }
        if (used != text.size() || !std::isfinite(v) || v < lo || v > hi)
          return "expected a finite number in " + range + ", got " + text;
        return {};
      },
      "NUMBER in " + range);
}

void add_spec_limit_option(CLI::App& sub, SpecLimits& limits) {
  sub.add_option("--input", limits.model_input,
                 "With a model file (block.onnx) in place of the spec: its input shape, N x C x sizes (e.g. "
                 "4x24x48x48x48); without it, the model's own input shape, where it fixes every dim");
  sub.add_flag("--allow-links", limits.allow_links,
               "With a model file (block.onnx) in place of the spec: follow symbolic links to its external data "
               "(refused otherwise: a model you did not make could link anywhere)");
  sub.add_option("--max-runs", limits.max_runs,
                 "Refuse a spec that expands to more runs (block x sweep point x variant) than this, and to more "
                 "than 1000 ops per allowed run")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  // Below 2^30: op and value ids are ints.
  sub.add_option("--max-network-ops", limits.max_network_ops,
                 "Refuse a network variant that expands to more ops (or entries: each repeat and unit instance "
                 "counted) than this")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  sub.add_option_function<std::vector<std::string>>(
      "--sweep",
      [&limits](const std::vector<std::string>& sweeps) {
        // Checked when the spec is read (a throw here would escape the command line's parser).
        for (const std::string& s : sweeps) {
          const size_t eq = s.find('=');
          limits.sweep_overrides.emplace_back(s.substr(0, eq), eq == std::string::npos ? "" : s.substr(eq + 1));
        }
      },
      "Sweep a block field over these values, e.g. --sweep batch=1,2,4 (repeatable, once per field; replaces the "
      "spec's sweep of that field or adds one)");
}

CLI::AsNumberWithUnit decimal_units() {
  return CLI::AsNumberWithUnit(
      std::map<std::string, double>{{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}},
      static_cast<CLI::AsNumberWithUnit::Options>(CLI::AsNumberWithUnit::CASE_SENSITIVE |
                                                  CLI::AsNumberWithUnit::UNIT_OPTIONAL),
      "UNIT");
}

int64_t parse_byte_size(const std::string& text, const std::string& option) {
  // DIGITS [UNIT], spaces allowed around both, read by hand: std::regex recursed once per
  // character and overflowed the stack on an argument of 100,000 spaces.
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::string_view rest = text;
  while (!rest.empty() && space(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && space(rest.back())) rest.remove_suffix(1);
  size_t n = 0;
  while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
  const std::string digits(rest.substr(0, n));
  rest.remove_prefix(n);
  while (!rest.empty() && space(rest.front())) rest.remove_prefix(1);
  const std::string_view unit = rest;
  if (digits.empty() || (unit != "" && unit != "B" && unit != "KiB" && unit != "MiB" && unit != "GiB" && unit != "TiB"))
    throw InputError({"command line", 0, 0}, option,
                     "expected a size such as 4GiB, 512MiB or a number of bytes, got \"" + text + "\"");
  const int shift = unit == "KiB" ? 10 : unit == "MiB" ? 20 : unit == "GiB" ? 30 : unit == "TiB" ? 40 : 0;
  // Compare the digits before converting: std::stoll would throw on anything beyond int64.
  if (digits.size() > 19 || (digits.size() == 19 && digits > "9223372036854775807"))
    throw InputError({"command line", 0, 0}, option, "size too large: " + text);
  const int64_t value = std::stoll(digits);
  if (value > (INT64_MAX >> shift)) throw InputError({"command line", 0, 0}, option, "size too large: " + text);
  return value << shift;
}

std::vector<std::string> comma_list(const std::string& text, const char* option, const std::string& what) {
  std::vector<std::string> items;
  std::string rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    if (item.empty()) throw InputError({"command line", 0, 0}, option, "an empty " + what + " in \"" + text + "\"");
    items.push_back(item);
  }
  return items;
}

std::string limits_device_help() {
  return "Draw floors against this GPU's datasheet (dense peak FLOP/s of the rows' dtype, memory bandwidth): " +
         gpu_datasheet_names() +
         " (convbench list shows them with their sources); on a GPU that did not run the rows, a floor is a lower "
         "bound there, not a prediction; not with --peak-flops or --bandwidth";
}

void check_limits_device(const std::string& name, double peak_flops, double bandwidth) {
  if (name.empty()) return;
  if (!find_gpu_datasheet(name))
    throw InputError({"command line", 0, 0}, "--limits",
                     "unknown device \"" + name + "\": convbench has the datasheets of " + gpu_datasheet_names());
  if (peak_flops > 0 || bandwidth > 0)
    throw InputError({"command line", 0, 0}, "--limits",
                     "names the limits already: give either --limits or --peak-flops and --bandwidth");
}

}  // namespace convbench::cli

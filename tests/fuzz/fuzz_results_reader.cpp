// libFuzzer harness: any bytes as a results file, then, when it is valid, every output format
// rendered from it and a diff of it against itself, as `report` and `diff` do; and the same bytes
// as a shard's results file, merged on its own, as `merge` does. Bad input may only end in a
// InputError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "report/regression_diff.hpp"
#include "report/report_formats.hpp"
#include "results/json_reader.hpp"
#include "results/json_results.hpp"
#include "sweep/merge.hpp"
#include "sweep/shard_file.hpp"
#include "util/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  convbench::InputText in;
  in.name = "fuzz.json";
  in.text.assign(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc;
  try {
    doc = convbench::parse_json_input(in, "results file");
  } catch (const convbench::InputError&) {
    return 0;
  }
  try {
    convbench::ShardPlans plans;
    const convbench::ShardFile shard = convbench::shard_file_from_json(doc, in.name, plans);
    convbench::merged_results_json(convbench::merge_shards({{in.name, shard}}, false));
  } catch (const convbench::InputError&) {
  }
  try {
    const convbench::ResultSet set = convbench::results_from_json(doc, in.name);
    for (const std::string& format : convbench::report_format_names()) convbench::render_results(set, format);
    const convbench::DiffReport diff = convbench::diff_results(set, set, {}, "a.json", "b.json");
    convbench::format_diff(diff, convbench::TableStyle::markdown);
  } catch (const convbench::InputError&) {
  }
  return 0;
}

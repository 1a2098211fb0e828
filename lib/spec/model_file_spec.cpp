#include "spec/model_file_spec.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/input_error.hpp"

#ifdef CONVBENCH_WITH_ONNX
#include "onnx/onnx_model.hpp"
#endif

namespace convbench {
namespace {

#ifdef CONVBENCH_WITH_ONNX
[[noreturn]] void input_error(const std::string& message) {
  throw InputError({"command line", 0, 0}, "--input", message);
}

// "4x24x48x48x48" -> {4, 24, 48, 48, 48}: N, C and one to three spatial sizes, each 1 to 2^31.
std::vector<int64_t> parse_input_shape(const std::string& text) {
  std::vector<int64_t> dims;
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = part.empty() || part[0] < '0' || part[0] > '9' ? -1 : std::stoll(part, &used);
    } catch (const std::exception&) {
      v = -1;
    }
    if (used != part.size() || v < 1 || v > (int64_t{1} << 31))
      input_error("\"" + text + "\" is not N x C x sizes (e.g. 4x24x48x48x48: each a whole number from 1 to 2^31)");
    dims.push_back(v);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (dims.size() < 3 || dims.size() > 5)
    input_error("\"" + text + "\" has " + std::to_string(dims.size()) +
                " dims: give N x C and one to three spatial sizes (4x24x48x48x48)");
  return dims;
}

// The block's input: --input where given (it must agree with every dim the model fixes), else the
// model's own, which must then fix every dim.
std::vector<int64_t> block_input(const OnnxBlock& model, const std::string& input) {
  const auto& fixed = model.input_shape;
  auto shape_text = [&] {
    std::string s;
    for (const auto& d : fixed) s += (s.empty() ? "" : "x") + (d ? std::to_string(*d) : std::string("?"));
    return s;
  };
  if (input.empty()) {
    std::vector<int64_t> dims;
    for (const auto& d : fixed) {
      if (!d)
        input_error("is needed: the model's input is " + shape_text() +
                    " (? is a symbolic dim); give every dim, e.g. --input 2" + shape_text().substr(1));
      dims.push_back(*d);
    }
    return dims;
  }
  const std::vector<int64_t> dims = parse_input_shape(input);
  if (dims.size() != fixed.size())
    input_error(input + " has " + std::to_string(dims.size()) + " dims, the model's input " +
                std::to_string(fixed.size()) + " (" + shape_text() + ")");
  for (size_t i = 0; i < dims.size(); ++i)
    if (fixed[i] && *fixed[i] != dims[i])
      input_error(input + " disagrees with the model's input " + shape_text() + " in dim " + std::to_string(i) +
                  " (? dims take any size)");
  return dims;
}
#endif

}  // namespace

bool is_model_file(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

Spec model_file_spec(const std::string& path, const SpecLimits& limits) {
#ifndef CONVBENCH_WITH_ONNX
  (void)limits;
  throw InputError({path, 0, 0}, "file", "this convbench was built without ONNX (CMake CONVBENCH_ONNX=OFF)");
#else
  const OnnxBlock model = read_onnx_block(path);
  const std::vector<int64_t> dims = block_input(model, limits.model_input);
  if (!model.output_channels)
    throw InputError({path, 0, 0}, "graph.output",
                     "its channels cannot be followed through the nodes: write a spec with the block's "
                     "out_channels (configs/README.md, \"ONNX variants\")");
  const std::filesystem::path file(path);
  std::string name = file.stem().string();
  if (name.empty()) name = "block";
  // The spec a user would write for it, parsed as any spec is (so every check applies); the file
  // is named from the model's folder, as a spec beside it names it.
  nlohmann::ordered_json block = {
      {"name", name},
      {"batch", dims[0]},
      {"dims", dims.size() - 2},
      {"in_channels", dims[1]},
      {"out_channels", *model.output_channels},
      {"size", std::vector<int64_t>(dims.begin() + 2, dims.end())},
      {"variants", {{{"kind", "onnx"}, {"name", name}, {"file", file.filename().string()}}}}};
  const nlohmann::ordered_json text = {{"name", name}, {"blocks", {block}}};
  Spec spec = parse_spec_text(text.dump(), path + ".json", limits);
  spec.file = path;
  spec.sha256 = model.sha256;
  return spec;
#endif
}

}  // namespace convbench

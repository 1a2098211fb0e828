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

// The spec made of a model file was written here, not by anyone: its lines and columns point
// nowhere. A refusal names the model file and, where it is about one of its nodes, the node
// (the onnx kind keys each op "blocks[0].variants[0].file: graph.node[3] (Conv ...)").
std::string model_key_path(const std::string& key) {
  const std::string node_prefix = "blocks[0].variants[0].file: ";
  if (key.rfind(node_prefix, 0) == 0) return key.substr(node_prefix.size());
  const size_t dot = key.find('.');
  return dot == std::string::npos ? "the block made of it" : "the block made of it, " + key.substr(dot + 1);
}

// Every place the parsed spec remembers, as the model file and its key paths: what a refusal
// after parsing (a graph that does not build, a field that does not fit) then names.
void relocate_to_model(Spec& spec, const std::string& path) {
  const SourceLocation model{path, 0, 0};
  for (BlockSpec& block : spec.blocks) {
    block.where = model;
    block.key_path = model_key_path(block.key_path);
    block.dtype_where = model;
    block.dtype_key_path = model_key_path(block.dtype_key_path);
    block.precision.where = model;
    block.precision.key_path = model_key_path(block.precision.key_path);
    block.memory_policy.where = model;
    block.memory_policy.key_path = model_key_path(block.memory_policy.key_path);
    for (VariantSpec& v : block.variants) {
      v.where = model;
      v.key_path = model_key_path(v.key_path);
      if (v.memory_policy) {
        v.memory_policy->where = model;
        v.memory_policy->key_path = model_key_path(v.memory_policy->key_path);
      }
      if (v.precision) {
        v.precision->where = model;
        v.precision->key_path = model_key_path(v.precision->key_path);
      }
      for (CustomOpSpec& op : v.ops) {
        op.where = model;
        op.key_path = model_key_path(op.key_path);
      }
    }
  }
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
  const OnnxBlock model = read_onnx_block(path, {.allow_links = limits.allow_links});
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
      // A file whose exporter folded its batch norms into the convs is an inference model: it is
      // measured as one (a spec with mode: train says what it lacks).
      {"mode", model.folded_norms.empty() ? "train" : "infer"},
      {"variants",
       {{{"kind", "onnx"}, {"name", name}, {"file", file.filename().string()}, {"allow_links", limits.allow_links}}}}};
  const nlohmann::ordered_json text = {{"name", name}, {"blocks", {block}}};
  const std::string made = path + " (the spec made of it)";
  Spec spec;
  try {
    spec = parse_spec_text(text.dump(), made, limits);
  } catch (const InputError& e) {
    if (e.where().file != made) throw;
    throw InputError({path, 0, 0}, model_key_path(e.key_path()), e.message());
  }
  relocate_to_model(spec, path);
  spec.file = path;
  spec.sha256 = model.sha256;
  return spec;
#endif
}

}  // namespace convbench

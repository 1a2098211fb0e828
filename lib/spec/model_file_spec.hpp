// A spec made from a model file alone: `convbench compare block.onnx --input 4x24x48x48x48`
// measures the block a user exported from PyTorch without writing a spec. The spec has one block,
// named after the file, whose one variant is the file ({kind: onnx}); its batch, channels and size
// come from --input, or from the model's own input shape when that gives every dim; its output
// channels from the model. Everything else takes the spec defaults (float32, channels-first,
// training); a spec (configs/README.md "ONNX variants") sets them and puts variants beside it.
#pragma once

#include <string>

#include "spec/spec.hpp"
#include "spec/spec_loader.hpp"

namespace convbench {

// Whether `path` names a model file rather than a spec (it ends in ".onnx").
bool is_model_file(const std::string& path);

// The spec of the model file `path` (limits.model_input: "N x C x spatial", or empty). Spec::file
// is the model's path and Spec::sha256 its bytes' hash. An --input that disagrees with the model,
// or is missing where the model leaves a dim open, is an InputError at "--input".
Spec model_file_spec(const std::string& path, const SpecLimits& limits);

}  // namespace convbench

// An ONNX file read as a convbench block (configs/README.md "ONNX variants"): the file parsed
// with the ONNX project's own protobuf classes (Debian's libonnx-dev), checked as untrusted input,
// and its nodes translated into convbench's custom ops, each with the fields its op definition
// takes (onnx_nodes.cpp), so that everything a custom variant has (counts, the memory model,
// training through convbench's own backward, every backend) applies to it.
//
// Every problem is an InputError naming the file and the node ("graph.node[3] (Conv
// \"/conv1/Conv\")"): exit 2, nothing measured. The initializers' shapes give the ops' channels,
// kernels and biases; their values are the parameters' and running statistics' starting values
// (ParamInit::given), so the block runs, and a fold is proved, with the user's weights.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/op_fields.hpp"

namespace convbench {

// The most an ONNX file may hold: a conv block's weights are megabytes; a file claiming more is
// refused before it is parsed (protobuf holds it whole in memory).
inline constexpr int64_t kMaxOnnxBytes = int64_t{1} << 30;
// The most nodes a file may have (as --max-network-ops bounds a network's expanded ops).
inline constexpr int64_t kMaxOnnxNodes = 100000;
// The most bytes the starting values read from one file may take, as the doubles they are held
// in: a file's worth of float32 weights (kMaxOnnxBytes) twice over. Each tensor counts once however
// many nodes share it, so the bound is on memory actually held, not on the file's size or nodes.
inline constexpr int64_t kMaxOnnxValueBytes = 2 * kMaxOnnxBytes;

// How a file is read.
struct OnnxReadOptions {
  // Follow symbolic links on the way to external data files: the user vouches for the model (a
  // spec's `allow_links: true`, the command line's --allow-links). Off, a link is refused.
  bool allow_links = false;
};

// One op of the block, as a custom variant would write it.
struct ImportedOp {
  std::string op;                   // its kind, as convbench's op definitions spell it
  std::string name;                 // unique in the block; parameters are named after it
  std::vector<std::string> inputs;  // op names, or "input" for the block input
  OpFieldValues fields;
  std::string node;  // where it came from: "graph.node[3] (Conv \"/conv1/Conv\")"
  // The starting values of the op's parameters and buffers the file gives, by the suffix the op
  // names them with ("weight", "bias", "running_mean", "running_var"), in convbench's logical order.
  std::map<std::string, GivenValues> values;
};

struct OnnxBlock {
  std::string file;    // as given
  std::string sha256;  // of the file's bytes
  int64_t opset = 0;   // of the default ("" or "ai.onnx") domain
  std::string producer;
  // The graph input's shape: N, C, then the spatial dims; nullopt where the file leaves a dim
  // symbolic (dynamic batch, say).
  std::vector<std::optional<int64_t>> input_shape;
  std::vector<ImportedOp> ops;
  // The convs into which the exporter folded a batch norm (PyTorch's default exporter does so even
  // for a module in training: onnxscript's FuseBatchNormIntoConv, named in the node's metadata), as
  // node labels: such a file is an inference model, with no batch norm to train.
  std::vector<std::string> folded_norms;
  std::string output;                      // the op whose value is the graph output
  std::optional<int64_t> output_channels;  // when the nodes let them be followed
};

// Reads, checks and translates `path` (InputError, exit 2, for anything it cannot).
OnnxBlock read_onnx_block(const std::string& path, const OnnxReadOptions& options = {});
// The same for a file's bytes already read (`name` for messages): what the fuzzer feeds.
OnnxBlock parse_onnx_block(const std::string& bytes, const std::string& name, const OnnxReadOptions& options = {});

// The ONNX operators convbench translates, for messages and documents.
const std::vector<std::string>& supported_onnx_operators();

}  // namespace convbench

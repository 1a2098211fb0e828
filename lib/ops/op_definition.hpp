// One op kind's definition, in one file per op (lib/ops/<op>.cpp): how many inputs it takes, the
// fields a custom op of its kind may set and how they become attributes, shape inference and
// validation with the parameters and buffers it owns, its autograd saving rule (what backward
// reads, the aux tensors forward makes for it, which input gradients are passed on instead of
// computed, whether it is the identity in inference), its work (MACs and elementwise FLOPs per
// direction), its attributes as the resolved spec spells them, its traits: the questions
// generic code asks of any op (is it an activation, may it run in place, does it change layout,
// which fused conv epilogue computes it), its ONNX form (the nodes export writes, the operator
// import reads) and the PyTorch peer's module for it.
//
// The registry (op_registry.hpp) maps op kind -> definition. The spec's custom-op parser, the
// graph builder, the custom variant builder, the autograd rules the executor and the memory
// model read, the counts, the resolved spec, the conv fusion rule, the ONNX exporter and importer
// all consult it instead of switches and string lists of their own. Each backend's kernels for
// the op are registered in that backend's file for the op's family.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/graph.hpp"
#include "graph/shape_rules.hpp"
#include "ops/onnx_node_reader.hpp"
#include "ops/onnx_node_writer.hpp"
#include "ops/op_fields.hpp"

namespace convbench {

// Which of the op's own tensors its backward reads (parameters are resident anyway).
struct SavedTensors {
  std::vector<int> inputs;  // positions in op.inputs that are saved
  bool output = false;      // the op's output is saved
  // Positions in the op's weights (op.params, then op.buffers) whose cast copies backward reads
  // when the op computes with cast copies (Op::param_cast, mixed precision): conv keeps its cast
  // weight, as PyTorch's convolution saves the weight it was given; never its bias.
  std::vector<int> weights;
};

// How the gradient of the op's output reaches input `position`:
//  alias   - the same tensor is passed on, nothing is allocated (add; sub's first operand),
//  compute - a new tensor is allocated and filled by the backend.
enum class GradFlow { alias, compute };

struct WorkCounts {
  int64_t forward = 0, backward_data = 0, backward_weight = 0;
};

// An op's work per direction: multiply-accumulates (convolutions) and elementwise FLOPs. The
// counts (analysis/op_counts.cpp) make FLOPs = 2 x MACs + elementwise, and zero the backward in
// inference.
struct OpWork {
  WorkCounts macs;
  WorkCounts elementwise;
};

// What an op's work depends on besides the graph: which inputs need a gradient, and the mode.
struct WorkQuery {
  const Graph& graph;
  const Op& op;
  const std::vector<bool>& input_requires_grad;  // one per op input
  bool training;
  bool any_input_grad() const;
  int64_t output_elements() const;
};

// A parameter or buffer an op declares while it is added to a graph; the graph names it
// "<op name>.<suffix>".
struct ParamDecl {
  std::string suffix;  // "weight", "bias", "running_mean", ...
  std::vector<int64_t> shape;
  int64_t fan_in = 1;
  ParamInit init = ParamInit::uniform_fan_in;
  // Buffers only: held in the statistics dtype (float32 for half-precision blocks, as running
  // statistics are), or, when false, in the block's dtype as parameters are (a frozen conv's weight).
  bool statistics = true;
  // Memory order of a rank >= 3 tensor. A conv's weight (Cout, Cin/g, k...) follows its input's
  // layout, so a channels_last block keeps it (Cout, k..., Cin/g) as cuDNN's NHWC filters and
  // oneDNN's ohwi want it: no conversion in each step. Values stay logical everywhere else
  // (initialisation, model files, ONNX, peers), through runtime/host_io.hpp.
  Layout layout = Layout::channels_first;
};

// What shape inference gives for one op: its output, and the parameters and buffers it owns.
struct OpShape {
  TensorDesc output;
  std::vector<ParamDecl> params;
  std::vector<ParamDecl> buffers;
};

// The activations a conv's fused epilogue can compute (backends/conv_fusion.hpp): the ones
// oneDNN's eltwise post-ops and cuDNN's pointwise ops both have. Each backend maps them to its
// library's own mode; an op names the one it is (OpTraits::conv_epilogue).
enum class ConvEpilogueAct { relu, leaky_relu, sigmoid };

// What generic code asks of an op instead of keeping its own list of kinds: the memory policies,
// `explain`, the fold's reasons and the backends' checks. Every definition states its traits (the
// registry refuses one that leaves them unset), so that a new op's author answers each question:
// a new activation that said nothing would silently get no inplace_act.
struct OpTraits {
  // An elementwise nonlinearity (relu, leaky_relu, sigmoid): what memory_policy inplace_act runs in
  // place, what `explain` names when it cannot, a reason an op is not folded (not linear).
  bool activation = false;
  // Whether the op may write its output over its input (Op::in_place) and still compute its exact
  // backward from what it saves then (saved_in_place), given its attributes: a leaky_relu with a
  // negative slope may not (its output's sign no longer says where its input was negative).
  // Empty: never. Whether another op still needs the input is the memory policy's question.
  std::function<bool(const Op&)> in_place_safe;
  // The op's output may be in another memory layout than its inputs (convert_layout); every other
  // op keeps its inputs' layout, which the backends check.
  bool changes_layout = false;
  // The fused conv epilogue (ConvEpilogueAct above) that computes this activation after a conv,
  // when one does; nullopt: a conv followed by it is never fused (conv_fusion conv_act).
  std::optional<ConvEpilogueAct> conv_epilogue;
};

// How torch.autocast treats an op (PyTorch 2.x; configs/README.md "Mixed precision" has the table
// and how each entry was checked):
//  lower   - runs in the lower-precision dtype: its inputs are cast down, and its parameters too,
//            through copies that autocast caches for the step (conv, conv_transpose, linear);
//  float32 - runs in float32: lower-precision inputs are cast up (CPU's 3-D pools, CUDA's
//            group_norm and upsample);
//  follows - runs in its inputs' dtype without a cast (activations, pools, batch norm with its
//            float32 parameters and statistics); inputs of different dtypes are first cast to
//            the widest of them, as PyTorch's type promotion (and CPU autocast's cat) gives.
enum class AutocastClass { lower, float32, follows };

struct AutocastQuery {
  const Graph& graph;
  const Op& op;
  AutocastDevice device;
};

// The same class on every device and for every attribute.
inline std::function<AutocastClass(const AutocastQuery&)> autocast_always(AutocastClass c) {
  return [c](const AutocastQuery&) { return c; };
}

struct OpDefinition {
  OpKind kind;
  std::string_view name;  // to_string(kind), filled in by the registry: "batch_norm"
  // Whether a spec's custom op may name it (false: only a transform makes it, as folded_conv).
  bool spec_op = true;
  int min_inputs = 1;
  int max_inputs = 1;  // -1: any number (concat)
  // Keys a custom op of this kind may set besides op, name and inputs, with the kind of value each
  // takes, in the order messages list them.
  std::vector<OpField> fields;
  std::vector<std::string> spec_fields;  // their keys, filled in by the registry
  // Sets the op's attributes from the fields a custom op gave, applying the defaults of those it
  // left out (empty function: the op has no fields).
  std::function<void(const OpFieldValues&, const FieldContext&, Op&)> apply_fields;

  // Shape inference and validation (GraphError "<op>: message" on a bad attribute or shape, with
  // the site in a custom op's spec entry where one field is at fault), and the parameters the op
  // owns. `op` holds its inputs (valid value ids) and attributes; it may normalise them
  // (conv_transpose's empty output_padding becomes zeros).
  std::function<OpShape(const Graph& graph, Op& op)> infer;

  // --- the autograd saving rule (follows PyTorch, so measured memory compares with its users') ---
  SavedTensors saved;
  // When set, replaces `saved`: what backward keeps depends on which inputs need a gradient (mul
  // keeps each operand for the other's gradient only, as PyTorch's autograd does).
  std::function<SavedTensors(const std::vector<bool>& input_requires_grad)> saved_for;
  // What backward keeps when the op runs in place (Op::in_place, memory policies), where that
  // differs: an in-place leaky_relu keeps its output, as PyTorch's leaky_relu_ saves its result.
  std::optional<SavedTensors> saved_in_place;
  // Tensors forward makes for backward, in training only (empty function: none).
  std::function<std::vector<TensorDesc>(const Graph&, const Op&)> aux;
  // What each of those tensors is, in the same order ("mean", "inverse std"): reports name a
  // saved tensor "mean of bn1" (analysis/memory_model.cpp). Every aux tensor has a name
  // (op_registry_test.cpp).
  std::vector<std::string> aux_names;
  // Gradients passed on as aliases of the output's (empty: every input's is computed).
  std::function<GradFlow(int position)> grad_flow;
  // In inference the op returns its input itself (dropout, as PyTorch's eval mode).
  bool identity_in_inference = false;

  // --- counts ---
  std::function<OpWork(const WorkQuery&)> work;
  // Elements PyTorch's module for the op keeps as buffers and convbench's op does not: BatchNorm's
  // num_batches_tracked, one int64 (read only with momentum=None, which convbench does not
  // offer). Counted beside the buffers (buffer_counters) so that a user's
  // sum(b.numel() for b in model.buffers()) equals buffers + buffer_counters; not in the memory
  // model, which holds what convbench keeps.
  int64_t pytorch_counter_elements = 0;

  // --- the resolved spec: the op's attributes with every default applied, as a spec spells them ---
  std::function<nlohmann::ordered_json(const Op&)> attributes;  // empty: no attributes

  // --- mixed precision: the op's autocast class (AutocastClass above) on a device; empty: autocast
  // has no rule for it, and a variant with `precision: amp_*` that contains it is refused ---
  std::function<AutocastClass(const AutocastQuery&)> autocast;

  // --- traits (OpTraits above): required; `OpTraits{}` states that none applies ---
  std::optional<OpTraits> traits;

  // --- the PyTorch peer (scripts/peer/modules.py) ---
  // The module the peer builds for the op, as modules.py spells it: PyTorch's own ("nn.ReLU"; the
  // 2-D class where the dims choose one, "nn.Conv2d") or the peer's ("InPlaceABN"). Required for an
  // op a spec may name (spec_op); the PeerModules tests check that modules.py builds it.
  std::string_view peer_module;

  // --- ONNX (`convbench export`, lib/onnx/README.md) ---
  // The op's inference forward as ONNX opset-17 nodes: the nodes PyTorch's exporter writes for its
  // module, named after the op, with its weights named as convbench's parameters (what the
  // importer reads back). Empty: the op has no ONNX form, and export refuses it with
  // `onnx_refusal`, or "op kind <op> has no ONNX form" when that is empty too.
  std::function<void(OnnxNodeWriter&, const Op&)> onnx_export;
  std::string_view onnx_refusal;
  // The ONNX operator the importer reads as this op, one node to one op (OnnxImport in
  // onnx_node_reader.hpp); nullopt: none does, or the importer's own readers take its form.
  std::optional<OnnxImport> onnx_import;
};

}  // namespace convbench

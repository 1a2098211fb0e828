// Typed block specs, after parsing, defaults, validation and sweep expansion.
// The file format (JSON or YAML, same structure) is documented in README.md "Spec format".
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/dtype.hpp"
#include "graph/graph.hpp"
#include "graph/tensor_desc.hpp"
#include "ops/op_fields.hpp"
#include "util/enum_words.hpp"
#include "util/input_error.hpp"

namespace convbench {

enum class NormKind { batch, group, none };
// A block's `act:` (each the op of the same name; act_kind_words() lists the spellings).
enum class ActKind { relu, leaky_relu, relu6, silu, hardswish, gelu, none };
enum class RunMode { train, infer };
// Where a block's memory layout meets the rest of the network:
//  none     - the block's input and output are in the block's own layout (a whole network in it);
//  boundary - the network around the block is channels-first: a channels-last block converts its
//             input on the way in and its output on the way out (two convert_layout ops in the
//             step, as x.contiguous(memory_format=...) in PyTorch). A channels-first block has
//             nothing to convert.
enum class LayoutConversion { none, boundary };

// One op of a custom variant. What its fields may be, their defaults and its shape rules come
// from its kind's definition (lib/ops/<op>.cpp), which the graph builder applies
// (GraphBuilder::add_from_fields); the parser rejects fields that do not belong to the kind.
struct CustomOpSpec {
  std::string op;                   // its kind, as graph/op_kinds.def spells it
  std::string name;                 // the value it produces; later ops and `output` refer to it
  std::vector<std::string> inputs;  // value names; "input" is the block input
  OpFieldValues fields;             // the fields the spec sets; the others take their defaults
  std::string key_path;             // e.g. blocks[0].variants[3].ops[2]
  SourceLocation where;
  // The starting values a model file gives its parameters and buffers (kind onnx: the
  // initializers), by the suffix the op names them with ("weight", "running_mean").
  std::map<std::string, GivenValues> values;
};

// Where a memory policy was given (configs/README.md "Memory policies"), so that a policy that cannot apply
// to what the variant builds is refused at that key.
struct MemoryPolicyChoice {
  MemoryPolicy policy = MemoryPolicy::none;
  std::string key_path;  // e.g. blocks[0].memory_policy, blocks[0].variants[2].memory_policy
  SourceLocation where;
};

// `precision: plain | amp_float16 | amp_bfloat16` (graph/dtype.hpp) and where it was given.
struct PrecisionChoice {
  Precision precision = Precision::plain;
  std::string key_path;  // e.g. blocks[0].precision, blocks[0].variants[1].precision
  SourceLocation where;
};

struct VariantSpec {
  std::string kind;               // a kind of spec/block_kinds.def (its definition: spec/block_kind.hpp)
  std::string name;               // defaults to kind; names are unique within a block
  std::vector<CustomOpSpec> ops;  // custom
  std::string output;             // custom: the value that is the block output (default last op)
  // onnx: the model file (as found from the spec's folder), its SHA-256, producer and opset; its
  // nodes, translated, are `ops` and `output` (lib/onnx). allow_links: symbolic links on the way
  // to its external data are followed (the user vouches for the model); refused otherwise.
  std::string file, file_sha256, onnx_producer;
  int64_t onnx_opset = 0;
  bool allow_links = false;
  // folded: the variant it folds (another variant of the block, not folded itself), and how:
  // "once" (the kernel computed at build time: inference) or "online" (inside every step).
  std::string of;
  std::string fold = "once";
  // The kind's own parameters: a struct of its own file (read and written by its definition,
  // lib/spec/kind_<kind>.cpp; kind_parameters<T>(v) in block_kind.hpp gives them); empty for the
  // bare kind name, whose parameters all take their defaults. The fields above are those other
  // code reads too: a custom or onnx variant's ops (the network builder, the model-file spec)
  // and a folded variant's source (the folding layers).
  std::any kind_parameters;
  // In a network: the slot classes this variant goes into (empty: every slot); slots of other
  // classes get `standard`. A network's custom variant keeps its ops unresolved (NetworkSpec).
  std::vector<std::string> fills;
  // The variant's own memory policy, which overrides the block's (two variants with the same kind
  // and different policies compare the policies side by side).
  std::optional<MemoryPolicyChoice> memory_policy;
  // The variant's own precision, which overrides the block's (float32 beside AMP in one table).
  std::optional<PrecisionChoice> precision;
  std::string key_path;  // e.g. blocks[0].variants[1]
  SourceLocation where;
};

struct NetworkSpec;  // spec/network_spec.hpp

// A variant whose file could not be read (an ONNX file convbench cannot translate, or one that does
// not fit the block): compare and analyze keep it as a row with status `unreadable` and the reason,
// and run the block's other variants; every other command refuses the spec with `error`.
struct UnreadableVariant {
  std::string name, kind;
  InputError error;  // where and why, as the spec error would have said it
};

// Thrown by a block kind's reader when the variant's own file cannot be read: the variant parser
// keeps it as an UnreadableVariant instead of refusing the whole spec.
class UnreadableFile : public InputError {
 public:
  explicit UnreadableFile(const InputError& e) : InputError(e) {}
};

struct BlockSpec {
  std::string name;
  int dims = 2;
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  std::vector<int64_t> size;    // dims entries
  std::vector<int64_t> kernel;  // dims entries (a scalar in the file is repeated)
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;  // resolved: "same" = dilation*(kernel-1)/2
  std::vector<int64_t> dilation;
  bool bias = true;
  NormKind norm = NormKind::batch;
  int64_t norm_groups = 16;
  ActKind act = ActKind::relu;
  double negative_slope = 0.01;
  double dropout = 0.0;
  bool residual = false;
  DType dtype = DType::float32;
  // Where `dtype` was given (in the block, `defaults` or a sweep point); empty key path when it
  // was not: an AMP precision refuses a dtype given beside it.
  std::string dtype_key_path;
  SourceLocation dtype_where;
  PrecisionChoice precision;  // every variant's, unless the variant sets its own
  // Whose torch.autocast rules an AMP variant follows: CPU's, unless its rows run on the cuda
  // device (spec_on_device in variants/variant_builder.hpp sets it so; no spec key names it: a
  // spec says what runs, not where).
  AutocastDevice autocast_device = AutocastDevice::cpu;
  Layout layout = Layout::channels_first;
  LayoutConversion layout_conversion = LayoutConversion::none;
  RunMode mode = RunMode::train;
  MemoryPolicyChoice memory_policy;  // every variant's, unless the variant sets its own
  std::string baseline;              // a variant name (resolved: the first variant when not given)
  std::vector<VariantSpec> variants;
  // The variants that could not be read (never the baseline): rows of their own, after the others.
  std::vector<UnreadableVariant> unreadable;

  // The swept fields and their values for this expanded block, in sweep order, each value as
  // compact JSON text (e.g. {"batch": "8", "layout": "\"channels_last\""}). Empty without sweep.
  std::vector<std::pair<std::string, std::string>> point;
  std::string key_path;  // blocks[i] (networks[i] for a network)
  SourceLocation where;
  // Set when this entry is a network (spec/network_spec.hpp): the fields above then hold the
  // network's input (batch, in_channels, size, dtype, layout, mode) and its slot defaults (kernel,
  // padding as resolved with that kernel, dilation, bias, norm, act, dropout); out_channels and
  // stride are not used. Networks follow the blocks in Spec::blocks, so every command that runs
  // blocks runs networks the same way, one row per network x variant x sweep point.
  std::shared_ptr<const NetworkSpec> network;
};

struct Spec {
  std::string name;
  std::string file;
  std::string sha256;             // of the bytes read (load_spec_file), for the provenance of results
  std::string text;               // those bytes (UTF-8, checked), for the provenance of results; empty for a model file
  std::vector<BlockSpec> blocks;  // expanded: every block at every sweep point, block-major, then the networks
};

// Each enum's spellings in a spec and in results (util/enum_words.hpp), and its word.
const EnumWords<NormKind>& norm_kind_words();
const EnumWords<ActKind>& act_kind_table();
const EnumWords<RunMode>& run_mode_words();
const EnumWords<LayoutConversion>& layout_conversion_words();
std::string_view to_string(NormKind kind);
std::string_view to_string(ActKind kind);
// Every ActKind's spelling, in the enum's order: what `act:` accepts, in blocks and network slots.
const std::vector<std::string>& act_kind_words();
// The ActKind spelled `word` (one of act_kind_words()).
ActKind act_kind_of(const std::string& word);
std::string_view to_string(RunMode mode);
std::string_view to_string(LayoutConversion conversion);

// Whether the block's step converts layouts at its boundary (a channels-last block with
// layout_conversion: boundary), and the names of the two ops that do it.
bool converts_at_boundary(const BlockSpec& block);
inline constexpr const char* kToBlockLayoutOp = "to_channels_last";
inline constexpr const char* kFromBlockLayoutOp = "to_channels_first";

// The memory policy a variant of the block runs with: its own, else the block's.
const MemoryPolicyChoice& memory_policy_of(const BlockSpec& block, const VariantSpec& variant);

// The precision a variant of the block runs with: its own, else the block's.
const PrecisionChoice& precision_of(const BlockSpec& block, const VariantSpec& variant);

// The block input a block spec describes: (batch, in_channels, size...), its dtype and layout
// (channels-first when the block converts at its boundary: the network's layout, not the block's).
TensorDesc block_input(const BlockSpec& block);
// "batch=8,layout=channels_last" or "" (stable; used to pair rows across result files).
std::string point_label(const BlockSpec& block);

}  // namespace convbench

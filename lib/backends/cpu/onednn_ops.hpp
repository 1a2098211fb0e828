// Internal to the cpu backend: the ops it runs through oneDNN (convolution, transposed
// convolution, channels_last batch-norm forward, the activations its eltwise primitive has) and the machinery they
// share. Each op's call is a Plan: one or more primitives ("steps") run in order, each with the reorders that move
// tensors between the executor's plain layouts and the (blocked) formats the primitive computes in. Reordered copies
// and scratchpads are placed in the executor's workspace by the plan, so workspace_bytes() is
// exactly what a call touches. Plans are created on first use and cached by a key that captures
// everything oneDNN bakes into a primitive (shapes, layout, attributes, phase, training).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/conv_fusion.hpp"
#include "runtime/backend.hpp"

namespace convbench::cpu {

inline constexpr int64_t kWorkspaceAlignment = 64;

inline int64_t align_workspace(int64_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

// One argument of a primitive. `source` indexes the tensors of the call (each op family numbers
// them). When the primitive wants another format than the executor's tensor has, `internal`
// differs from `user`, and the copy in that format lives in the workspace at `offset`.
struct Operand {
  int arg = 0;  // DNNL_ARG_*
  int source = 0;
  bool is_output = false;
  dnnl::memory::desc user;
  dnnl::memory::desc internal;
  dnnl::primitive reorder;  // user -> internal for inputs, internal -> user for outputs
  dnnl::memory::desc reorder_scratchpad;
  int64_t offset = -1;          // -1: the primitive uses the executor's tensor directly
  bool filled_earlier = false;  // an earlier step of the plan already made this copy
  bool reordered() const { return internal != user; }
};

inline Operand operand(int arg, int source, bool is_output, const dnnl::memory::desc& user) {
  Operand o;
  o.arg = arg;
  o.source = source;
  o.is_output = is_output;
  o.user = user;
  return o;
}

struct Step {
  dnnl::primitive primitive;
  dnnl::memory::desc scratchpad;
  std::vector<Operand> operands;
  int64_t scratch_offset = 0;  // the primitive's and its reorders' scratchpads (run one at a time)
};

struct Plan {
  std::vector<Step> steps;
  int64_t workspace_bytes = 0;
};

// oneDNN's data type for a dtype the backend stores: float32 (tf32 is float32 on the CPU, see
// cpu_backend.hpp), bfloat16 or float16; others throw.
dnnl::memory::data_type onednn_type(DType dtype);
// The activation format of a tensor as the executor stores it (nchw, ncdhw, nhwc or ndhwc), with
// its elements of `type`.
dnnl::memory::desc activation_md(const TensorDesc& desc, dnnl::memory::data_type type);
// A plain vector (bias, BN statistics).
dnnl::memory::desc vector_md(int64_t n, dnnl::memory::data_type type = dnnl::memory::data_type::f32);
dnnl::memory::dims to_dims(const std::vector<int64_t>& v);
// Whether oneDNN fell back to its slow reference implementation for this primitive.
bool is_reference_impl(const dnnl::primitive_desc_base& pd);

// Whether a batch-norm call runs on oneDNN (channels_last forward), else in batch_norm_cpu.cpp.
bool batch_norm_on_onednn(const TensorDesc& in, Phase phase);

// An activation as oneDNN's eltwise primitive computes it: the algorithm with its alpha and beta,
// and whether its backward reads the output (the *_use_dst_for_bwd algorithms) or the input.
struct EltwiseForm {
  dnnl::algorithm algorithm;
  float alpha = 0.0f;
  float beta = 0.0f;
  bool backward_reads_output = false;
};

class OneDnnOps {
 public:
  // `fusion`: conv_act gives each conv whose in-place activation follows it that activation as
  // an eltwise post-op (backends/conv_fusion.hpp).
  explicit OneDnnOps(ConvFusion fusion = ConvFusion::none);

  // Workspace bytes of the conv, conv_transpose and batch_norm calls that run on oneDNN
  // (creating their plans); 0 for every other call.
  int64_t workspace_bytes(const Graph& graph, const Op& op, Phase phase, bool training);

  void conv_forward(const ForwardCall& call);
  void conv_backward(const BackwardCall& call);
  void batch_norm_forward(const ForwardCall& call);  // only where batch_norm_on_onednn()

  // An activation over every element of x (onednn_eltwise.cpp); y may be x. Backward reads
  // `saved`, the input or the output as `form` says.
  void eltwise_forward(const EltwiseForm& form, const Tensor& x, Tensor& y);
  void eltwise_backward(const EltwiseForm& form, const Tensor& saved, const Tensor& dy, Tensor& dx);

  int64_t primitives_created() const { return primitives_created_; }

  // Whether oneDNN has an optimised (not reference) convolution for `dtype` on this CPU: bfloat16
  // needs AVX512-BF16 or AMX, float16 a CPU oneDNN 2.6 has no float16 kernels for. Asked once per
  // dtype with a small 3x3 conv.
  bool has_fast_conv(DType dtype);

  // The epilogue a oneDNN conv's forward applies under conv_act fusion, or nullopt.
  std::optional<ConvEpilogue> fused_epilogue(const Graph& graph, const Op& op, Phase phase) const;

 private:
  const Plan& conv_plan(const Graph& graph, const Op& op, Phase phase, bool training, bool grad_input);
  Plan build_conv_plan(const Graph& graph, const Op& op, Phase phase, bool training, bool grad_input);
  const Plan& batch_norm_plan(const Graph& graph, const Op& op, bool training);
  Plan build_batch_norm_plan(const Graph& graph, const Op& op, bool training);
  const Plan& eltwise_plan(const EltwiseForm& form, Phase phase, int64_t elements);

  // Adds `pd`'s primitive as a step; `operands` name each argument's user format and source.
  void add_step(Plan& plan, const dnnl::primitive_desc& pd, std::vector<Operand> operands);
  // Places copies and scratchpads in the workspace; copies that several steps read are made once.
  static void place(Plan& plan);
  // Runs the plan on the call's tensors (`tensors` indexed by Operand::source).
  void run(const Plan& plan, const std::vector<void*>& tensors, void* workspace);

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::primitive_attr attr_;  // user-managed scratchpads for every primitive
  ConvFusion fusion_;
  std::unordered_map<std::string, Plan> plans_;
  int64_t primitives_created_ = 0;
  std::vector<float> variance_;      // BN per-channel variance from oneDNN, for our statistics
  std::map<DType, bool> fast_conv_;  // has_fast_conv()'s answers
};

}  // namespace convbench::cpu

// Element types and memory layouts of tensors in the op graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convbench {

// tf32 is float32 storage with TensorFloat-32 tensor-core math on GPUs; float64 exists for the
// reference backend's oracle runs. uint8 (dropout masks) and int64 (max-pool indices) only appear
// in tensors that ops save for backward; a spec can name none of these three.
enum class DType { float32, tf32, float16, bfloat16, float64, uint8, int64 };

enum class Layout { channels_first, channels_last };

// How a block's step chooses its element types (configs/README.md "Mixed precision"):
//  plain        - every tensor in the block's dtype;
//  amp_float16  - PyTorch's automatic mixed precision: float32 parameters, gradients and norm
//  amp_bfloat16   statistics, each op in the dtype its autocast class gives (OpDefinition::autocast),
//                 with casts where autocast casts. float16 adds GradScaler's loss scaling.
// Its own spec field beside `dtype`, not a dtype value: dtype names the element type of every
// tensor of the step, which AMP by design does not have (element_bytes, the kernels, the series
// key and the peer's torch dtype all read dtype as one type).
enum class Precision { plain, amp_float16, amp_bfloat16 };
// Which of PyTorch's autocast op lists apply: they differ between devices (on CPU 3-D pools run in
// float32 and group_norm follows its input; on CUDA group_norm and upsample run in float32).
enum class AutocastDevice { cpu, cuda };

std::string_view to_string(DType dtype);
std::string_view to_string(Layout layout);
// Parses the four element types a spec may name.
std::optional<DType> parse_dtype(std::string_view name);
// The dtype statistics (BN mean/invstd) are kept in: float64 for float64 runs, float32 otherwise.
DType stats_dtype(DType dtype);
std::optional<Layout> parse_layout(std::string_view name);
std::string_view to_string(Precision precision);
std::string_view to_string(AutocastDevice device);
// The spellings a spec may give `precision`, in the order messages list them.
const std::vector<std::string>& precision_names();
std::optional<Precision> parse_precision(std::string_view name);
// The lower-precision dtype autocast computes in; nullopt for plain.
std::optional<DType> autocast_dtype(Precision precision);
// channels_first <-> channels_last.
constexpr Layout other_layout(Layout layout) {
  return layout == Layout::channels_first ? Layout::channels_last : Layout::channels_first;
}

// Bytes one element occupies in memory (tf32 is stored as float32).
int64_t element_bytes(DType dtype);

// A float32 value as a TF32 tensor-core operand: the mantissa rounded from 23 to 10 bits, to
// nearest with ties away from zero (what PTX's cvt.rna.tf32.f32 does), exponent range kept.
// NaN and infinity stay; a value that rounds past the largest finite float becomes infinity.
// The reference backend applies it to convolution operands in tf32 runs, so that its answer is
// the one TF32 hardware computes (up to the order of the sums), not float32's.
float round_to_tf32(float value);

}  // namespace convbench

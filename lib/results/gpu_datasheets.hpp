// GPUs' dense peak FLOP/s per dtype and memory bandwidth, as their vendor's datasheets state them:
// the one table behind `--limits NAME` (floors on a GPU the user may not have) and behind the
// roof of a recorded GPU (results/device_limits.hpp). A compiled table rather than a data file:
// the binary carries it to a GPU machine that has no checkout (scripts/gpu-check.sh copies the
// build), nothing can be missing at run time, and the test gpu_datasheets_test checks every row.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace convbench {

struct GpuDatasheet {
  std::string name;   // what --limits takes: "h100-sxm"
  std::string title;  // what sources say: "H100 SXM"
  // Dense peaks (no structured sparsity), FLOP/s. 0: the GPU has no arithmetic for that dtype
  // (`note` says so). tf32 on a GPU without TF32 tensor cores is float32's rate, as cuDNN then
  // computes in float32; float16 and bfloat16 are tensor-core rates with float32 accumulation,
  // as convolutions accumulate.
  double float32 = 0, tf32 = 0, float16 = 0, bfloat16 = 0;
  double bandwidth_bytes_per_s = 0;
  std::string source;  // the vendor's document the numbers are read from, and where it is
  std::string note;    // where a number is not simply the datasheet's headline figure
  // How CUDA names the part (cudaDeviceProp::name, as results record it): a recorded name that
  // contains every `has` and no `lacks` is this GPU.
  std::vector<std::string> has, lacks;
};

// Every row, in the order `convbench list` shows them.
const std::vector<GpuDatasheet>& gpu_datasheets();
// The row --limits NAME names; nullptr when none.
const GpuDatasheet* find_gpu_datasheet(const std::string& name);
// The row a recorded GPU name is; nullptr when convbench does not know it (or it is ambiguous
// between parts with other limits, as "H100 NVL").
const GpuDatasheet* gpu_datasheet_for(const std::string& gpu_name);
// "h100-sxm, h100-pcie, ...": for messages.
std::string gpu_datasheet_names();
// The peak for `dtype` (float32 | tf32 | float16 | bfloat16); nullopt for another dtype or one the
// GPU has no arithmetic for.
std::optional<double> datasheet_peak_flops(const GpuDatasheet& d, const std::string& dtype);

}  // namespace convbench

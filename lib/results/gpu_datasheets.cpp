#include "results/gpu_datasheets.hpp"

#include <algorithm>

namespace convbench {
namespace {

// Where a datasheet states tensor-core rates with structured sparsity only, or both, the dense
// figure is taken: half the sparse one. Bandwidths are the datasheets' (decimal: 3.35 TB/s is
// 3.35e12 bytes/s).
std::vector<GpuDatasheet> table() {
  const auto h100 = [](const std::string& part) {
    return "NVIDIA H100 Tensor Core GPU datasheet (" + part + "), https://www.nvidia.com/en-us/data-center/h100/";
  };
  const auto a100 = [](const std::string& part) {
    return "NVIDIA A100 Tensor Core GPU datasheet (" + part + "), https://www.nvidia.com/en-us/data-center/a100/";
  };
  const std::string halved = "tensor rates: half the datasheet's figures with sparsity";
  // A table, kept one row per GPU (clang-format would put every field on a line of its own).
  // clang-format off
  //  name         title               float32   tf32      float16    bfloat16   bandwidth
  return {
      {"h100-sxm",  "H100 SXM",         67e12,    495e12,   989e12,    989e12,    3.35e12,
       h100("H100 SXM"), halved + " (989 TF32, 1979 FP16 and BF16 TFLOPS)",
       {"H100"}, {"PCIe", "NVL"}},
      {"h100-pcie", "H100 PCIe",        51e12,    378e12,   756e12,    756e12,    2.0e12,
       h100("H100 PCIe"), halved + " (756 TF32, 1513 FP16 and BF16 TFLOPS)",
       {"H100", "PCIe"}, {}},
      {"h200",      "H200 SXM",         67e12,    495e12,   989e12,    989e12,    4.8e12,
       "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM), https://www.nvidia.com/en-us/data-center/h200/",
       halved + " (989 TF32, 1979 FP16 and BF16 TFLOPS); the H100 SXM's compute with HBM3e",
       {"H200"}, {"NVL", "GH200"}},
      {"a100-40gb", "A100 40GB SXM",    19.5e12,  156e12,   312e12,    312e12,    1.555e12,
       a100("A100 40GB SXM"), "the datasheet gives the dense and the sparse tensor rates",
       {"A100", "SXM", "40GB"}, {}},
      {"a100-80gb", "A100 80GB SXM",    19.5e12,  156e12,   312e12,    312e12,    2.039e12,
       a100("A100 80GB SXM"), "the datasheet gives the dense and the sparse tensor rates",
       {"A100", "SXM", "80GB"}, {}},
      {"l4",        "L4",               30.3e12,  60e12,    121e12,    121e12,    0.3e12,
       "NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/",
       halved + " (120 TF32, 242 FP16 and BF16 TFLOPS)",
       {"NVIDIA L4"}, {"L40"}},
      {"l40s",      "L40S",             91.6e12,  183e12,   362.05e12, 362.05e12, 0.864e12,
       "NVIDIA L40S GPU datasheet, https://www.nvidia.com/en-us/data-center/l40s/",
       "the datasheet gives the dense and the sparse tensor rates",
       {"L40S"}, {}},
      {"a10",       "A10",              31.2e12,  62.5e12,  125e12,    125e12,    0.6e12,
       "NVIDIA A10 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/products/a10-gpu/",
       "the datasheet gives the dense and the sparse tensor rates",
       {"NVIDIA A10"}, {"A100", "A10G", "A10M"}},
      {"v100-sxm2", "V100 SXM2",        15.7e12,  15.7e12,  125e12,    0,         0.9e12,
       "NVIDIA Tesla V100 GPU datasheet (V100 SXM2), https://www.nvidia.com/en-us/data-center/v100/",
       "no TF32 tensor cores: a tf32 row computes in float32, at its rate; no bfloat16 arithmetic at all; "
       "float16: the datasheet's 125 TFLOPS of tensor performance",
       {"V100", "SXM2"}, {}},
      {"rtx-4090",  "GeForce RTX 4090", 82.6e12,  82.6e12,  165.2e12,  165.2e12,  1.008e12,
       "NVIDIA Ada GPU Architecture whitepaper, appendix A (GeForce RTX 4090), "
       "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
       "float16 and bfloat16 with float32 accumulation, half the rate with float16 accumulation; the GeForce "
       "product page gives no tensor rates",
       {"RTX 4090"}, {"4090 D", "Laptop"}},
  };
  // clang-format on
}

bool has_part(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

const std::vector<GpuDatasheet>& gpu_datasheets() {
  static const std::vector<GpuDatasheet> rows = table();  // immutable once built
  return rows;
}

const GpuDatasheet* find_gpu_datasheet(const std::string& name) {
  for (const GpuDatasheet& d : gpu_datasheets())
    if (d.name == name) return &d;
  return nullptr;
}

const GpuDatasheet* gpu_datasheet_for(const std::string& gpu_name) {
  if (gpu_name.empty()) return nullptr;
  for (const GpuDatasheet& d : gpu_datasheets()) {
    const auto in_name = [&](const std::string& part) { return has_part(gpu_name, part); };
    if (std::all_of(d.has.begin(), d.has.end(), in_name) && std::none_of(d.lacks.begin(), d.lacks.end(), in_name))
      return &d;
  }
  return nullptr;
}

std::string gpu_datasheet_names() {
  std::string s;
  for (const GpuDatasheet& d : gpu_datasheets()) s += (s.empty() ? "" : ", ") + d.name;
  return s;
}

std::optional<double> datasheet_peak_flops(const GpuDatasheet& d, const std::string& dtype) {
  double peak = 0;
  if (dtype == "float32") peak = d.float32;
  if (dtype == "tf32") peak = d.tf32;
  if (dtype == "float16") peak = d.float16;
  if (dtype == "bfloat16") peak = d.bfloat16;
  if (peak <= 0) return std::nullopt;
  return peak;
}

}  // namespace convbench

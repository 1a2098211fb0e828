// Whether this process can use a GPU, and what the GPU is (for `--device auto`, for the error of
// `--device cuda`, and for the provenance of results).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace convbench::cuda {

// Why the CUDA backend cannot run here (no driver, no device, a device older than the compiled
// architectures, cuDNN missing), or nullopt when it can. Never throws.
std::optional<std::string> cuda_unavailable_reason();

// What cudaGetDeviceCount's failure means, in plain words, with the runtime's own message kept
// as a detail. `driver_version` is cudaDriverGetVersion's answer (0: no driver is loaded) and
// `runtime_version` cudaRuntimeGetVersion's (e.g. 13000). The runtime says "CUDA driver version
// is insufficient for CUDA runtime version" both when the driver is too old and when there is no
// driver at all, which is what a machine without a GPU has: the two get different advice.
std::string describe_unavailable(int status, const std::string& status_text, int driver_version, int runtime_version);

// The lowest compute capability (major * 10 + minor) this build has machine code or PTX for,
// parsed from a CMAKE_CUDA_ARCHITECTURES list such as "80;90", "80,90" or "80-real;90-virtual"
// (0 when it names none, as "native").
int lowest_architecture(const std::string& architectures);
// The architectures this binary was compiled for, comma-separated ("80,90").
std::string compiled_architectures();

// The current device: name, compute capability, memory, multiprocessors, L2 size, clocks, and
// the driver, runtime and cuDNN versions. Throws when there is no usable device.
nlohmann::json device_info();

}  // namespace convbench::cuda

#!/usr/bin/env bash
# Installs what convbench needs to build, run and test on Debian 12, when it is missing.
# Idempotent: does nothing (and needs no network) when everything is present.
#
#   scripts/setup.sh          install what is missing (apt-get, as root or through sudo)
#   scripts/setup.sh --list   print the package list, one per line, and install nothing
#
# Packages are installed with --no-install-recommends, so every package the build, the main
# command or a test uses must be named here or be a dependency (Depends, not Recommends) of one
# named here. scripts/check-deps.py (ctest `setup_covers_build_dependencies`) checks exactly
# that against what CMake found and what the Python tests import.
set -euo pipefail

packages=(
  # the build
  build-essential cmake ccache pkg-config git
  libcli11-dev nlohmann-json3-dev libspdlog-dev libyaml-cpp-dev
  libgtest-dev libbenchmark-dev
  # oneDNN (the cpu backend); its CMake config calls find_package(OpenCL), whose library and
  # headers come from ocl-icd-opencl-dev, only a Recommends of libdnnl-dev
  libdnnl-dev ocl-icd-opencl-dev
  # the host code compiled a second time with clang (scripts/clang-check.sh, run by the tests):
  # clang's OpenMP, and the LLVM tools CMake picks for a clang build when they are present
  clang-14 libomp-14-dev llvm-14 lld-14
  # clang's sanitizer and libFuzzer runtimes (scripts/sanitize.sh, scripts/fuzz.sh)
  libclang-rt-14-dev
  # the code's style (.clang-format; ctest `code_follows_clang_format`, scripts/format.sh)
  clang-format-14
  # the tests: PyTorch and NumPy as the peer, PyYAML to read the specs, pdflatex with booktabs
  # for the LaTeX output
  python3-yaml python3-numpy python3-torch
  # the peer environment (scripts/setup-peers.sh): a virtual environment from Debian's python3 with
  # current PyTorch from PyPI, and the Python headers torch.compile's C++ kernels are built with
  python3-venv python3-dev
  texlive-latex-base texlive-latex-recommended
  # Google Benchmark's tools/compare.py, which reads --gbench-json, and the SciPy it imports for
  # its U test (not a dependency of the package)
  libbenchmark-tools python3-scipy
  # pandas reads the CSV in a test, as its users do
  python3-pandas
  # --plots DIR: rsvg-convert turns each SVG figure into a PDF (found at run time; without it the
  # figures are SVG only); the tests render the figures as readers do, SVG in Chromium and the
  # PDF with pdftoppm
  librsvg2-bin chromium poppler-utils
  # `convbench slurm` calls sbatch and squeue; its test starts a one-machine cluster with Debian's
  # daemons (tests/slurm_cluster_test.sh)
  slurmctld slurmd slurm-client
  # convbench history: the results store is SQLite; its shell reads the store in a test, as a
  # user inspecting the documented tables would
  libsqlite3-dev sqlite3
)

if [ "${1:-}" = --list ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "convbench setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

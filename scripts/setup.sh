#!/usr/bin/env bash
# Installs what convbench needs on Debian 12, when it is missing, in two parts: what building and
# running the `convbench` program needs (the main command, scripts/convbench), and what the tests
# need besides (scripts/test.sh). Idempotent: does nothing (and needs no network) when everything
# is present.
#
#   scripts/setup.sh                install what building and running convbench needs
#   scripts/setup.sh --tests        install that and everything the tests use
#   scripts/setup.sh --list [build|tests]
#                                   print the package list (both parts, or one), one per line,
#                                   and install nothing
#
# Packages are installed with --no-install-recommends, so every package the build, the main
# command or a test uses must be named here or be a dependency (Depends, not Recommends) of one
# named here. scripts/check-deps.py (ctest `setup_covers_build_dependencies`) checks exactly
# that against what CMake found and what the Python tests import, and that a build without the
# tests needs nothing from the tests' part.
set -euo pipefail

build_packages=(
  # the compilers and the build (ccache makes a rebuild after a branch switch quick)
  build-essential cmake ccache pkg-config git
  # the libraries convbench links
  libcli11-dev nlohmann-json3-dev libspdlog-dev libyaml-cpp-dev
  # oneDNN (the cpu backend); its CMake config calls find_package(OpenCL), whose library and
  # headers come from ocl-icd-opencl-dev, only a Recommends of libdnnl-dev
  libdnnl-dev ocl-icd-opencl-dev
  # convbench history: the results store is SQLite, or a team's PostgreSQL server through libpq
  libsqlite3-dev libpq-dev
  # ONNX files as blocks ({kind: onnx}): the ONNX project's protobuf classes, on protobuf
  libonnx-dev libprotobuf-dev
  # every --filter: RE2, a regex engine linear in the name (std::regex overflows the stack on long names)
  libre2-dev
)

test_packages=(
  # the unit tests (GoogleTest, through ctest)
  libgtest-dev
  # the host code compiled a second time with clang (scripts/clang-check.sh, run by the tests):
  # clang's OpenMP, and the LLVM tools CMake picks for a clang build when they are present
  clang-14 libomp-14-dev llvm-14 lld-14
  # clang's sanitizer and libFuzzer runtimes (scripts/sanitize.sh, scripts/fuzz.sh)
  libclang-rt-14-dev
  # the code's style (.clang-format; ctest `code_follows_clang_format`, scripts/format.sh)
  clang-format-14
  # the Python tests: NumPy, PyYAML to read the specs
  python3-yaml python3-numpy
  # the peer environment (scripts/setup-peers.sh): a virtual environment from Debian's python3 with
  # current PyTorch from PyPI (the tests' PyTorch peer), and the Python headers torch.compile's C++
  # kernels are built with
  python3-venv python3-dev
  # pdflatex with booktabs for the LaTeX output
  texlive-latex-base texlive-latex-recommended
  # Google Benchmark's tools/compare.py, which reads --gbench-json, and the SciPy it imports for
  # its U test (not a dependency of the package)
  libbenchmark-tools python3-scipy
  # the history tests' PostgreSQL server (scripts/test-postgres.sh starts a throwaway one on
  # loopback), with psql and pg_dump to read what convbench wrote. Installing it also creates and
  # starts Debian's own cluster on port 5432 (Debian's packaging does that); the tests do not use it

  postgresql
  # pandas reads the CSV in a test, as its users do
  python3-pandas
  # a spreadsheet opens the CSV in a test: LibreOffice Calc imports it headless and openpyxl reads
  # the cells it made (no formula from a hostile name); about 270 MB installed
  libreoffice-calc-nogui python3-openpyxl
  # --plots DIR: rsvg-convert turns each SVG figure into a PDF (found at run time; without it the
  # figures are SVG only); the tests render the figures as readers do, SVG in Chromium and the
  # PDF with pdftoppm
  librsvg2-bin chromium poppler-utils
  # `convbench slurm` calls sbatch and squeue; its test starts a one-machine cluster with Debian's
  # daemons (tests/slurm_cluster_test.sh)
  slurmctld slurmd slurm-client
  # the SQLite shell reads the history in a test, as a user inspecting the documented tables would
  sqlite3
  # zsh loads the zsh completion `cmake --install` installs (tests/install_test.sh), as bash does its own
  zsh
)

case "${1:-}" in
  --list)
    case "${2:-}" in
      "") printf '%s\n' "${build_packages[@]}" "${test_packages[@]}" ;;
      build) printf '%s\n' "${build_packages[@]}" ;;
      tests) printf '%s\n' "${test_packages[@]}" ;;
      *) echo "setup: --list takes build or tests, not $2" >&2; exit 2 ;;
    esac
    exit 0 ;;
  --tests) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  "") packages=("${build_packages[@]}") ;;
  *) echo "setup: unknown argument $1 (see the comment at the top of scripts/setup.sh)" >&2; exit 2 ;;
esac

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

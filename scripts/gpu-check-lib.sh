# Which tests scripts/gpu-check.sh runs in each stage, and how it judges their output. Sourced by
# gpu-check.sh and by tests/gpu_check_test.sh, which runs these judges on recorded outputs on
# machines without a GPU, so that the first GPU run cannot fail on the harness itself.
# shellcheck shell=bash

# The check stage: the GPU tests, and only they (tests/cuda_backend_test.cpp names its suites
# Gpu*). A test outside these that skips when a GPU is present would make the stage fail.
# Two passes, so that a call cut short still judges what a GPU has judged before: first the
# suites that have run on a GPU (the H200 check of 2026-11-26), then those no GPU has run yet.
# Move a suite to the first list once a GPU check has passed it; tests/gpu_check_test.sh checks
# that the two lists are every suite of cuda_backend_test.cpp, each once.
GPU_SUITES_RUN_BEFORE='GpuBackendBasics.*:GpuDevice.*:GpuClock.*:GpuTiming.*:GpuOps.*:Gpu/GpuRiskyConvs.*:GpuVariants.*:GpuGraphs.*:GpuMemory.*:GpuSizeLimits.*'
GPU_SUITES_NEVER_RUN='GpuDepthwise.*:GpuLinear.*:GpuCudnnGraph.*:GpuFusion.*:GpuAmp.*'
# CONVBENCH_GPU_TEST_FILTER replaces both passes with one (a rerun of the tests that failed, e.g.
# 'GpuGraphs.*'); GPU_TEST_FILTER is what the check runs in all.
GPU_TEST_FILTER=${CONVBENCH_GPU_TEST_FILTER:-$GPU_SUITES_RUN_BEFORE:$GPU_SUITES_NEVER_RUN}
# The test stage: everything else through ctest, but the checks of a fresh Debian 12 machine
# (setup_*), which are about the development machine's packages, not the GPU machine's image,
# and the checks that read outputs with Debian's tools the GPU machine's image lacks: the LaTeX
# compiles (pdflatex, texlive), Google Benchmark's compare.py (libbenchmark-tools), pandas and
# LibreOffice.
HOST_TEST_EXCLUDE='^(Gpu|setup_|ReportFormats.Latex(FitsOneColumnOfAOneColumnArticle|OfTheSeedBlockMeasuredFitsOneColumn)$|gbench_json_reads_well_in_compare_py$|csv_reads_as_numbers_in_pandas$|csv_opens_safely_in_a_spreadsheet$)'

# judge_gtest_log LOG GPU_NAME: the verdict on the check stage's GoogleTest output. With a GPU
# present (GPU_NAME not empty), a skipped GPU test means the GPU was not usable: a failure.
# Prints one line per problem and a last line "verdict: passed|FAILED (...)"; returns 0 / 1.
judge_gtest_log() {
  local log=$1 gpu=$2 ran failed skipped
  # The sum over the log's runs (the check stage runs GoogleTest once per pass).
  ran=$(sed -n -E 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' "$log" | awk '{ n += $1 } END { if (NR) print n }')
  # Test names are Suite.Test (Prefix/Suite.Test/param): lines such as "[  FAILED  ] 1 test,
  # listed below:" or the case lists "[  FAILED  ] case: ..." name none.
  local name='[A-Za-z0-9_/]+\.[A-Za-z0-9_/]+'
  failed=$(sed -n -E "s#^\[  FAILED  \] ($name)( .*)?\$#\1#p" "$log" | sort -u)
  skipped=$(sed -n -E "s#^\[  SKIPPED \] ($name)( .*)?\$#\1#p" "$log" | sort -u)
  local problems=0
  if [ -z "$ran" ] || [ "$ran" = 0 ]; then
    echo "no GPU test ran (does '$GPU_TEST_FILTER' match the tests of this build?)"
    problems=1
  fi
  if [ -n "$failed" ]; then
    echo "failed: $(echo "$failed" | paste -sd' ' -)"
    grep -E '^\[  FAILED  \] case: ' "$log" | sed 's/^\[  FAILED  \] /  /' | head -40
    problems=1
  fi
  if [ -n "$skipped" ]; then
    if [ -n "$gpu" ]; then
      echo "skipped although nvidia-smi reports $gpu: $(echo "$skipped" | paste -sd' ' -)"
      grep -E -A1 ': Skipped$' "$log" | grep -v -E ': Skipped$|^--$' | sed 's/^/  why: /' | head -5
      problems=1
    else
      echo "skipped: $(echo "$skipped" | wc -l) tests (no GPU found)"
      problems=1
    fi
  fi
  if [ "$problems" = 0 ]; then
    echo "verdict: passed ($ran tests)"
    return 0
  fi
  echo "verdict: FAILED"
  return 1
}

# judge_ctest_log LOG GPU_NAME: the verdict on the test stage's ctest output. ctest passes a
# test that prints "SKIP: ..." (the PyTorch peers without torch): on the GPU machine, where
# PyTorch is installed, such a skip means the peer did not run, so it is a failure there.
judge_ctest_log() {
  local log=$1 gpu=$2 summary skipped failed
  summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -1)
  failed=$(sed -n -E 's/^[[:space:]]+[0-9]+ - (.*) \((Failed|Timeout|SEGFAULT|Not Run|Subprocess aborted|Exception)\)$/\1/p' "$log")
  skipped=$(sed -n -E 's/^[[:space:]]+[0-9]+ - (.*) \(Skipped\)$/\1/p' "$log" | sed -E 's/ +#.*//')
  local problems=0
  if [ -z "$summary" ]; then
    echo "ctest printed no summary (did it run?)"
    problems=1
  fi
  if [ -n "$failed" ]; then
    echo "failed: $(echo "$failed" | paste -sd' ' -)"
    problems=1
  fi
  if [ -n "$skipped" ] && [ -n "$gpu" ]; then
    echo "skipped on the GPU machine: $(echo "$skipped" | paste -sd' ' -)"
    grep -E '^SKIP: ' "$log" | sort -u | sed 's/^/  /' | head -5
    problems=1
  fi
  if [ "$problems" = 0 ]; then
    echo "verdict: passed (${summary:-?})"
    return 0
  fi
  echo "verdict: FAILED${summary:+ ($summary)}"
  return 1
}

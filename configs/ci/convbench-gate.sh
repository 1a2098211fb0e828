#!/usr/bin/env bash
# convbench as a CI gate: what configs/ci/github-actions.yml and gitlab-ci.yml run
# (configs/ci/README.md says what each exit code means and how to use them).
#
#   convbench-gate.sh pull-request SPEC BASE_REF
#       SPEC as it is at BASE_REF (the target branch) against SPEC as it is in the working tree,
#       both measured here, interleaved (`convbench diff --interleave`), so that a shared runner's
#       neighbours fall on both sides; writes convbench-diff.md for a pull-request comment (and
#       convbench-base.yaml, the base side, while it runs).
#   convbench-gate.sh history SPEC
#       measures SPEC, judges each row against the history of its series and adds the run
#       (`convbench history check --add`; the history is $CONVBENCH_DB, an SQLite file or a
#       team's PostgreSQL server); writes convbench-run.json.
#
# Exit code: convbench's own, unchanged: 0 nothing regressed and everything was judged; 1 a
# regression (slower, more memory, failed); 3 a slowdown within the noise (rerun); 4 something
# could not be judged (a new block, a disturbed runner); 2 bad input. CONVBENCH (default
# `convbench` on PATH) is the program; CONVBENCH_ARGS adds measurement options (word-split), e.g.
# "--device cpu --threads 4"; CONVBENCH_GATE_FLAGS adds diff's or history check's own (e.g.
# --accept-unjudged for the run that seeds a history).
set -uo pipefail
convbench=${CONVBENCH:-convbench}
read -r -a measure <<<"${CONVBENCH_ARGS:-}"
read -r -a flags <<<"${CONVBENCH_GATE_FLAGS:-}"
usage() { sed -n '5,13p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage

say() { # EXIT: the gate's verdict in one line, for the job's log
  case $1 in
    0) echo "convbench gate: passed (exit 0)" ;;
    1) echo "convbench gate: a regression (exit 1): see the table above" ;;
    3) echo "convbench gate: a slowdown within the noise (exit 3): rerun the job" ;;
    4) echo "convbench gate: something could not be judged (exit 4): see above; CONVBENCH_GATE_FLAGS=--accept-unjudged accepts it" ;;
    *) echo "convbench gate: convbench refused its input (exit $1): see above" ;;
  esac
}

case $1 in
  pull-request)
    [ $# -eq 3 ] || usage
    spec=$2 base_ref=$3
    # The base side beside the report, named for what it is (diff's header shows the name).
    base=convbench-base.${spec##*.}
    trap 'rm -f "$base"' EXIT
    if ! git show "$base_ref:$spec" >"$base" 2>/dev/null; then
      echo "convbench gate: $spec does not exist at $base_ref: nothing to compare with (exit 4)"
      exit 4
    fi
    "$convbench" diff --interleave "$base" "$spec" "${measure[@]}" "${flags[@]}" --markdown convbench-diff.md
    status=$?
    ;;
  history)
    [ $# -eq 2 ] || usage
    spec=$2
    "$convbench" compare "$spec" "${measure[@]}" --json convbench-run.json >/dev/null
    status=$?
    if [ "$status" = 0 ]; then
      "$convbench" history check convbench-run.json --add "${flags[@]}"
      status=$?
    fi
    ;;
  *) usage ;;
esac
say "$status"
exit "$status"

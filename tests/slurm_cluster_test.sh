#!/usr/bin/env bash
# `convbench slurm` against a real Slurm: a one-machine cluster (Debian 12's slurmctld and slurmd,
# installed by scripts/setup.sh) in a temporary folder on loopback ports, no munge, no systemd.
# A 4-shard sweep of a small spec on the cpu backend, with shard 2 made to fail (its results path
# is a folder, so it exits 2 before running); the merge job (afterany) still runs, writes the
# other shards' rows and names shard 2; a rerun of `convbench slurm` submits shard 2 alone, and
# the merged results then equal a single process's counts and statuses.
#
#   tests/slurm_cluster_test.sh CONVBENCH SOURCE_DIR [SANITIZED]
#
# Exits 77 (ctest: skipped), saying why, when the cluster cannot start here: the daemons' log
# lines are the reason. The daemons are always stopped.
set -euo pipefail
bin=$1
src=$2
sanitized=${3:-OFF}
skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
case "$sanitized" in ON | TRUE | 1 | on | true)
  skip "sanitizer build: the plain build runs this test (under ASan each shard is several times slower, and the" \
    "daemons are Debian's, not instrumented)" ;;
esac
[ "$(id -u)" = 0 ] || skip "needs root: slurmd starts the jobs as their users"
for tool in slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$tool" >/dev/null || skip "$tool not installed (scripts/setup.sh installs slurmctld slurmd slurm-client)"
done

tmp=$(mktemp -d /tmp/convbench-slurm.XXXXXX)
daemons=()
stop() {
  # Jobs a failed test left running, cancelled on this private cluster only (SLURM_CONF is ours).
  if [ "${SLURM_CONF:-}" = "$tmp/slurm.conf" ] && [ ${#daemons[@]} -gt 0 ]; then
    timeout 10 scancel --full --user="$(id -un)" 2>/dev/null || true
  fi
  for p in "${daemons[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${daemons[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap stop EXIT
start=$(date +%s)

node=$(hostname -s)
read -r cpus memory < <(slurmd -C | sed -n 's/.* CPUs=\([0-9]*\) .* RealMemory=\([0-9]*\).*/\1 \2/p')
[ -n "${cpus:-}" ] || skip "slurmd -C printed no CPUs/RealMemory: $(slurmd -C 2>&1 | head -3)"
# Below what slurmd -C reports, or the node is drained as smaller than configured.
memory=$((memory < 2000 ? memory : 2000))
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=convbench-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
# 22.05's slurmd initialises cgroups whatever the plugins; v2 needs systemd and dbus.
echo "CgroupPlugin=cgroup/v1" >"$tmp/cgroup.conf"
export SLURM_CONF=$tmp/slurm.conf

logs() { tail -n 15 "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/*.stderr 2>/dev/null | tr '\n' ' '; }
slurmctld -D -c -f "$tmp/slurm.conf" >"$tmp/slurmctld.stderr" 2>&1 &
daemons+=($!)
slurmd -D -N "$node" -f "$tmp/slurm.conf" >"$tmp/slurmd.stderr" 2>&1 &
daemons+=($!)
state=""
for _ in $(seq 1 60); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
  [ "$state" = idle ] && break
  for p in "${daemons[@]}"; do kill -0 "$p" 2>/dev/null || skip "a Slurm daemon exited: $(logs)"; done
  sleep 0.5
done
[ "$state" = idle ] || skip "the node did not become idle in 30 s (state \"$state\"): $(logs)"
echo "cluster up in $(($(date +%s) - start)) s: node $node, $cpus CPUs, ports $ctld_port/$slurmd_port"

spec=$src/tests/data/specs/sweep-small.yaml
quick=(--device cpu --min-time 0.01 --min-samples 2 --max-noise 1000 --timeout 0.5 --threads 1)
"$bin" compare "$spec" "${quick[@]}" -q --json "$tmp/single.json" >/dev/null

sweep=$tmp/sweep
mkdir -p "$sweep"
wait_for_sweep() {
  local name
  name=$(sed -n 's/^#SBATCH --job-name=//p' "$sweep/shards.sbatch")
  for _ in $(seq 1 360); do
    [ -z "$(squeue -h -o %A --name="$name")" ] && return 0
    sleep 0.5
  done
  fail "the jobs did not finish in 3 minutes: $(squeue) $(logs)"
}

# Shard 2 fails: its results path is a folder, which it refuses to replace (exit 2).
mkdir "$sweep/shard-2.json"
"$bin" slurm "$spec" --shards 4 --dir "$sweep" -- "${quick[@]}" | tee "$tmp/first.out"
grep -q "submitting 4 (0-3)" "$tmp/first.out" || fail "first run did not submit 4 shards"
wait_for_sweep
[ -f "$sweep/results.json" ] || fail "the merge job wrote nothing: $(cat "$sweep"/logs/merge-*.out)"
grep -q "rerun shards: 2 (of 4)" "$sweep"/logs/merge-*.out || fail "merge did not name shard 2: $(cat "$sweep"/logs/*)"
grep -q "is not a regular file\|directory" "$sweep"/logs/shard-2-*.out || fail "shard 2 failed otherwise: $(cat "$sweep"/logs/shard-2-*.out)"
for i in 0 1 3; do [ -f "$sweep/shard-$i.json" ] || fail "shard $i wrote nothing: $(cat "$sweep"/logs/shard-$i-*.out)"; done

# The rerun submits shard 2 alone, and the merge then has everything.
rmdir "$sweep/shard-2.json"
"$bin" slurm "$spec" --shards 4 --dir "$sweep" -- "${quick[@]}" | tee "$tmp/second.out"
grep -q "submitting 1 (2)" "$tmp/second.out" || fail "the rerun did not submit shard 2 alone"
grep -q "^#SBATCH --array=2$" "$sweep/shards.sbatch" || fail "the rerun's array is not 2: $(cat "$sweep/shards.sbatch")"
wait_for_sweep
python3 "$src/tests/compare_counts.py" "$tmp/single.json" "$sweep/results.json" ||
  fail "the merged sweep differs from one process"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; assert not p["missing"] and p["covered"]==p["items"], p' \
  "$sweep/results.json" || fail "the merged plan section says items are missing"
"$bin" report "$sweep/results.json" --format md >/dev/null || fail "report cannot read the merged sweep"

# Nothing left: a third run submits nothing.
"$bin" slurm "$spec" --shards 4 --dir "$sweep" -- "${quick[@]}" | tee "$tmp/third.out"
grep -q "nothing to submit" "$tmp/third.out" || fail "a complete sweep was submitted again"
echo "ok: 4-shard Slurm sweep with a failed shard, rerun and merge in $(($(date +%s) - start)) s"

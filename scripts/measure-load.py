#!/usr/bin/env python3
"""Runs a command and records how much of the machine other work took while it ran.

    scripts/measure-load.py --out LOAD.json -- COMMAND [ARGS...]

Exits with the command's own status. LOAD.json holds:
  wall_s          the command's wall time
  cpus            the CPUs this process may run on (its affinity)
  machine_busy_s  CPU-seconds every process on the machine used meanwhile (/proc/stat, all CPUs
                  except idle and iowait)
  own_cpu_s       CPU-seconds the command and every descendant it waited for used (user + system)

scripts/test-budgets.py --load LOAD.json scales each tier's budget by how much the other work
slowed the command: a test on a machine that two builds share takes longer without being
slower, and must not fail for it (scripts/README.md, "The test command and its tiers").
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time


def busy_seconds():
    """CPU-seconds the whole machine has been busy since boot (all CPUs, not idle or iowait)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    assert fields[0] == "cpu"
    ticks = [int(v) for v in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    # guest and guest_nice (fields 9 and 10) are already counted in user and nice.
    total = sum(ticks[:8])
    return (total - idle) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    before_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before_busy, start = busy_seconds(), time.monotonic()
    status = subprocess.run(command).returncode
    wall, busy = time.monotonic() - start, busy_seconds() - before_busy
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (usage.ru_utime - before_usage.ru_utime) + (usage.ru_stime - before_usage.ru_stime)
    record = {"wall_s": round(wall, 3), "cpus": len(os.sched_getaffinity(0)),
              "machine_busy_s": round(busy, 3), "own_cpu_s": round(own, 3)}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    return status


if __name__ == "__main__":
    sys.exit(main())

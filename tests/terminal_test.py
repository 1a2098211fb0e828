#!/usr/bin/env python3
"""What a user sees on a terminal and in redirected output (issue 15, item 4):

- on an 80-column terminal the progress line never reaches the last column (a wrapped line
  cannot be erased and leaves a stale line per redraw), and it is erased before the tables;
- warnings and logs go to stderr: `compare ... > file` puts only the tables in the file;
- colour: on by default on a terminal, off with NO_COLOR or --color never, on with --color
  always even into a pipe;
- a run past a few seconds with stderr redirected prints a line per finished variant; -q none.

usage: terminal_test.py CONVBENCH
"""
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios

SPEC = """\
name: terminal
blocks:
  - name: a-block-with-a-rather-long-name-to-test-the-cut-of-the-progress-label
    dims: 2
    batch: 1
    size: 8
    in_channels: 4
    out_channels: 4
    kernel: 3
    variants: [standard, separable]
"""
ERASE = b"\r\x1b[K"
COLOUR = re.compile(rb"\x1b\[[0-9;]*m")
PROGRESS = re.compile(rb"\[[#.]{20}\] \d+/\d+ ")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def on_terminal(argv, env, columns=80):
    """Runs argv with stdout and stderr on one pseudo-terminal `columns` wide; returns all bytes."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO once the child has closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    proc.wait()
    return proc.returncode, out


def main():
    binary = sys.argv[1]
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "spec.yaml")
        with open(spec, "w") as f:
            f.write(SPEC)
        run = [binary, "compare", spec, "--device", "cpu", "--min-time", "0.6", "--timeout", "1", "--min-samples", "3"]

        # 1. The progress line on an 80-column terminal.
        code, out = on_terminal(run, env)
        check(code == 0, f"compare on a terminal exited {code}: {out[-400:]!r}")
        table_at = out.find(b"a-block-with-a-rather-long-name")
        draws = [m.start() for m in re.finditer(re.escape(ERASE) + rb"\[", out)]
        check(len(draws) >= 3, f"expected the bar to be drawn and redrawn by its timer, got {len(draws)} draws")
        # The first table title is the first line that is not a progress draw.
        bars = [seg.split(b"\r")[0].split(b"\n")[0] for seg in out.split(ERASE) if PROGRESS.match(seg)]
        check(len(bars) >= 3, f"expected progress lines, found {len(bars)}")
        for bar in bars:
            check(len(bar) <= 79, f"progress line {len(bar)} columns wide on an 80-column terminal: {bar!r}")
        last_draw = max(draws) if draws else -1
        title = out.find(b"\n", last_draw) if last_draw >= 0 else -1
        erased = out.rfind(ERASE)
        check(last_draw < erased, "the last progress line is never erased")
        tables = out[erased + len(ERASE):]
        check(PROGRESS.search(tables) is None, "a progress line remains after the erase, in the tables")
        check(tables.lstrip(b"\r\n").startswith(b"a-block-with-a-rather-long-name"),
              f"the tables do not start right after the erased progress line: {tables[:120]!r}")
        check(COLOUR.search(tables) is not None, "no colour in the table on a terminal by default")
        del title, table_at

        # 2. NO_COLOR and --color never on a terminal: no colour codes at all.
        for label, extra_env, extra_args in (("NO_COLOR=1", {"NO_COLOR": "1"}, []),
                                             ("--color never", {}, ["--color", "never"])):
            code, out = on_terminal(run + extra_args, {**env, **extra_env})
            check(code == 0, f"{label}: exit {code}")
            check(COLOUR.search(out) is None, f"{label}: colour codes in the output: {COLOUR.findall(out)[:3]}")

        # 3. Redirected: tables only on stdout, warnings on stderr; --color always colours a pipe.
        bad = subprocess.run(run + ["--memory-limit", "1KiB"], capture_output=True, env=env)
        check(bad.returncode == 0, f"compare with an impossible memory limit exited {bad.returncode}: {bad.stderr!r}")
        check(b"[warning]" not in bad.stdout and b"oom" in bad.stdout,
              f"stdout must hold the table (status oom) and no log line: {bad.stdout[:300]!r}")
        check(b"[warning]" in bad.stderr, f"the oom warning is not on stderr: {bad.stderr[:300]!r}")
        check(COLOUR.search(bad.stdout) is None, "colour codes in redirected output")
        always = subprocess.run(run + ["--color", "always"], capture_output=True, env=env)
        check(COLOUR.search(always.stdout) is not None, "--color always does not colour a pipe")

        # 4. A run past a few seconds with stderr redirected (a CI log): a line per finished
        # variant with the count done and left, its outcome and time; none with -q.
        longer = run[:run.index("--min-time") + 1] + ["1.5", "--timeout", "2", "--min-samples", "3"]
        piped = subprocess.run(longer, capture_output=True, env=env)
        done = re.findall(rb"convbench: (\d)/2 done, (\d) left[^:]*: a-block[^:]*: ok[^,]*, \d+\.\d s\n", piped.stderr)
        check(piped.returncode == 0 and done and done[-1] == (b"2", b"0"),
              f"no progress line for the last variant of a run past 3 s on a redirected stderr: {piped.stderr!r}")
        check(b"done," not in piped.stdout, "progress lines on stdout")
        quiet = subprocess.run(longer + ["-q"], capture_output=True, env=env)
        check(quiet.returncode == 0 and b"done," not in quiet.stderr, f"-q still prints progress: {quiet.stderr!r}")

    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

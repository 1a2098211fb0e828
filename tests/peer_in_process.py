"""scripts/torch_peer.py's command, run inside the calling test's Python process.

A new Python spends about three seconds importing PyTorch before the peer does anything; the
peer tests call the peer dozens of times, so running each call as a process made up most of
their time. `run_torch_peer` calls the same `main(argv)` the script runs, with its output
captured, and returns what `subprocess.run` would. The script as a process is still tested end
to end by ctest `compare_peer_end_to_end` (`convbench compare --peer torch` starts it).
"""
import contextlib
import io
import os
import subprocess
import sys

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")


def run_torch_peer(argv, check=True):
    """`torch_peer.py ARGV` in this process: a CompletedProcess with its exit status, standard
    output and standard error. With check, a non-zero status raises AssertionError with its
    standard error."""
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    import torch_peer
    argv = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = torch_peer.main(argv)
        except SystemExit as e:  # argparse's usage errors and --help exit through SystemExit
            code = e.code if isinstance(e.code, int) or e.code is None else 2
    proc = subprocess.CompletedProcess(["torch_peer.py"] + argv, code or 0, out.getvalue(), err.getvalue())
    if check and proc.returncode != 0:
        raise AssertionError(f"torch_peer.py {' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    return proc

#!/usr/bin/env python3
"""Names that are not UTF-8, or very long, end to end (issue 37, items 2 and 5):

 - a spec at a Latin-1 path, an output path and a host name with a Latin-1 byte are recorded
   escaped (\\xe9) and every output is written: compare (--json, --csv), analyze --json, plan,
   validate (--resolved-json); the history takes the run (compare --db);
 - a Latin-1 name inside a spec (a block's, a variant's, a network stage's) is refused before any
   work by compare, analyze --json, plan and validate: exit 2, one line with the file, line,
   column, key path and the name escaped, no output;
 - names shown on the terminal, in Markdown and in HTML have their bidirectional controls escaped
   (\\u202e): they show the characters in the order they are stored;
 - --filter over a 30,000- and a 1,000,000-character block name (std::regex overflowed the stack
   from about 30,000): analyze, compare and plan, on a 1 MiB stack; and --memory-limit's size,
   the command line's one other pattern, given 100,000 spaces.

The host-name case needs root and a UTS namespace (unshare --uts); elsewhere it says it did not run.

usage: hostile_names_test.py CONVBENCH
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

failures = []
QUICK = ["--device", "reference", "--min-time", "0", "--min-samples", "2", "--timeout", "1", "-q"]


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def small_stack():
    # A 1 MiB stack: a regex engine that recursed per character would overflow well before the
    # 1,000,000-character name; RE2 needs none of it.
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


def run(args, stack=False):
    return subprocess.run(args, capture_output=True, preexec_fn=small_stack if stack else None)


def spec_text(block_name, variant_name=b"sep"):
    return (b"blocks:\n  - name: " + block_name + b"\n    batch: 1\n    in_channels: 4\n    out_channels: 4\n"
            b"    size: [4, 4]\n    variants: [standard, {kind: separable, name: " + variant_name + b"}]\n")


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def latin1_paths(binary, tmp):
    """A spec at a Latin-1 path, Latin-1 output paths: everything written, the paths escaped."""
    spec = os.path.join(tmp, b"sp\xe9c.yaml")
    write(spec, spec_text(b"tiny"))
    shown = "sp\\xe9c.yaml"
    out = {k: os.path.join(tmp, b"r\xe9sultat." + k.encode()) for k in ("json", "csv", "plan", "resolved", "analyze")}
    r = run([binary, "compare", spec, *QUICK, "--json", out["json"], "--csv", out["csv"]])
    check(r.returncode == 0, f"compare of a spec at a Latin-1 path: {r.returncode} {r.stderr[-400:]}")
    if r.returncode == 0:
        doc = json.load(open(out["json"], encoding="utf-8"))
        p = doc["provenance"]
        check(p["spec_file"].endswith(shown), f"spec_file recorded as {p['spec_file']!r}")
        check("r\\xe9sultat.json" in p["command_line"] and shown in p["command_line"],
              f"command_line: {p['command_line']!r}")
        check(os.path.getsize(out["csv"]) > 0, "compare --csv to a Latin-1 path wrote nothing")
    r = run([binary, "analyze", spec, "--json", out["analyze"]])
    check(r.returncode == 0 and json.load(open(out["analyze"]))["provenance"]["spec_file"].endswith(shown),
          f"analyze --json: {r.returncode} {r.stderr[-300:]}")
    r = run([binary, "plan", spec, "-o", out["plan"]])
    check(r.returncode == 0 and json.load(open(out["plan"]))["spec_file"].endswith(shown),
          f"plan: {r.returncode} {r.stderr[-300:]}")
    r = run([binary, "validate", spec, "--resolved-json", out["resolved"]])
    check(r.returncode == 0 and shown.encode() in r.stdout and
          json.load(open(out["resolved"]))["file"].endswith(shown), f"validate: {r.returncode} {r.stdout} {r.stderr}")


def latin1_names(binary, tmp):
    """A Latin-1 name inside a spec: refused before any work, located, escaped, nothing written."""
    network = (b"networks:\n  - name: net\n    batch: 1\n    in_channels: 4\n    size: 8\n    variants: [standard]\n"
               b"    stages:\n      - name: st\xe9\n        ops: [{op: slot, name: s}]\n")
    cases = [
        ("block", spec_text(b"caf\xe9"), ':2:14: blocks[0].name: the spec is not valid UTF-8 (byte 0xe9 in "caf\\xe9")'),
        ("variant", spec_text(b"tiny", b"s\xe9p"),
         ':7:51: blocks[0].variants[1].name: the spec is not valid UTF-8 (byte 0xe9 in "s\\xe9p")'),
        ("stage", network, ':8:17: networks[0].stages[0].name: the spec is not valid UTF-8 (byte 0xe9 in "st\\xe9")'),
    ]
    out = os.path.join(tmp, b"never")
    for what, text, message in cases:
        spec = os.path.join(tmp, what.encode() + b".yaml")
        write(spec, text)
        for command in (["compare", spec, *QUICK, "--json", out], ["analyze", spec, "--json", out],
                        ["plan", spec, "-o", out], ["validate", spec]):
            r = run([binary, *command])
            err = r.stderr.decode("utf-8", "replace")
            check(r.returncode == 2 and err.count("\n") == 1 and f"error: {spec.decode()}{message}" in err and
                  not os.path.exists(out) and not r.stdout,
                  f"a Latin-1 {what} name, {command[0]}: exit {r.returncode}, stderr {err!r}")


def latin1_host(binary, tmp):
    """The machine's name cannot be refused: recorded escaped, the run and its history kept."""
    if os.geteuid() != 0 or subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode != 0:
        print("note: the Latin-1 host name case did not run (it needs root and unshare --uts)")
        return
    spec = os.path.join(tmp, b"host.yaml")
    write(spec, spec_text(b"tiny"))
    out, db = os.path.join(tmp, b"host.json"), os.path.join(tmp, b"host.sqlite")
    rename = "import os, socket, sys; socket.sethostname(b'h\\xe9te'); os.execv(sys.argv[1], sys.argv[1:])"
    r = run(["unshare", "--uts", sys.executable, "-c", rename, binary, "compare", spec, *QUICK, "--json", out,
             "--db", db])
    check(r.returncode == 0, f"compare on a host named h\\xe9te: {r.returncode} {r.stderr[-400:]}")
    if r.returncode != 0:
        return
    check(json.load(open(out))["provenance"]["host_name"] == "h\\xe9te", "host_name not recorded as h\\xe9te")
    r = run([binary, "history", "list", "--db", db])
    check(r.returncode == 0, f"history list of that run: {r.returncode} {r.stderr[-300:]}")
    r = run([binary, "history", "export", "--db", db, "--format", "json"])  # the export carries the host
    check(r.returncode == 0 and {m["host"] for m in json.loads(r.stdout)} == {"h\\xe9te"},
          f"history export --format json: {r.stderr[-300:]}")
    r = run([binary, "history", "export", "--db", db])
    check(r.returncode == 0 and b"h\\xe9te" in r.stdout, f"history export: {r.stderr[-300:]}")


def bidi_names(binary, tmp):
    """A right-to-left override shows escaped where names are shown as text."""
    spec = os.path.join(tmp, b"bidi.yaml")
    write(spec, spec_text(b'"evil\\u202Etxt.exe"', b'"rlo\\u2067x"'))
    for fmt in ("table", "md", "html", "csv", "latex"):
        r = run([binary, "analyze", spec, "--format", fmt])
        text = r.stdout.decode("utf-8")
        check(r.returncode == 0 and "\u202e" not in text and "\u2067" not in text and "u202e" in text and
              "u2067" in text, f"analyze --format {fmt}: bidirectional controls not escaped: {r.stderr[-200:]}")
    r = run([binary, "analyze", spec, "--format", "json"])
    check(json.loads(r.stdout)["results"][0]["block"] == "evil\u202etxt.exe", "the JSON must keep the name as it is")


def long_names(binary, tmp):
    """--filter over very long names: linear time, no stack to overflow."""
    spec = os.path.join(tmp, b"long.yaml")
    write(spec, spec_text(b"x" * 30000) + spec_text(b"y" * 1000000)[len(b"blocks:\n"):])
    patterns = {".*": 0, "^y*/sep$": 0, "(x|y)*/standard": 0, "x+.*z": 2, "^(x*)*$": 2, "[[:alpha:]]+/s": 0}
    for pattern, want in patterns.items():
        for command in (["analyze", spec, "--format", "csv"], ["plan", spec, "-o", os.path.join(tmp, b"p.json")]):
            r = run([binary, *command, "--filter", pattern], stack=True)
            check(r.returncode == want, f"{command[0]} --filter {pattern}: exit {r.returncode} "
                  f"(expected {want}): {r.stderr[-300:]}")
    r = run([binary, "compare", spec, *QUICK, "--memory-only", "--filter", ".*sep$", "--format", "csv"], stack=True)
    rows = r.stdout.decode().splitlines()
    check(r.returncode == 0 and len(rows) == 5, f"compare --filter over long names: {r.returncode} {r.stderr[-300:]}")
    r = run([binary, "analyze", spec, "--filter", "(?=x)"])
    check(r.returncode == 2 and b"--filter: not a regular expression" in r.stderr, f"lookahead: {r.stderr}")
    # The one other expression of the command line, --memory-limit's size, is read by hand.
    r = run([binary, "compare", spec, *QUICK, "--memory-limit", " " * 100000 + "1x"], stack=True)
    check(r.returncode == 2 and b"--memory-limit: expected a size" in r.stderr, f"a 100,000-space size: {r.returncode}")
    r = run([binary, "compare", spec, *QUICK, "--memory-only", "--filter", "^x", "--memory-limit", " 64 MiB "])
    check(r.returncode == 0, f"--memory-limit ' 64 MiB ': {r.returncode} {r.stderr[-300:]}")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.fsencode(tmp)
        latin1_paths(binary, tmp)
        latin1_names(binary, tmp)
        latin1_host(binary, tmp)
        bidi_names(binary, tmp)
        long_names(binary, tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("hostile names: ok")


if __name__ == "__main__":
    main()

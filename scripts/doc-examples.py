#!/usr/bin/env python3
"""Runs the examples in convbench's Markdown documents and checks (or rewrites) their output.

An example is a fenced code block right after a marker comment:

    <!-- example -->                      run it; its output must match exactly
    <!-- example: measured -->            measured output: numbers, column widths, trust
                                          annotations and warning lines may differ, the rest
                                          must match; progress lines are left out
    <!-- example: measured vary=REGEX --> also ignore the lines matching REGEX (sentences whose
                                          wording follows the measured times)
    <!-- example: measured cpu="MODEL" -->  the output names the CPU it ran on (a history's
                                          series): MODEL, the one the document shows, and this
                                          machine's are compared as one (--update writes MODEL)
    <!-- example: peer -->                run with the peer environment's Python first on PATH
                                          (.venv-peers); skipped, saying why, where it is not ready
    <!-- example: recorded=PATH -->       not run here (a GPU's output, say): every output line
                                          must appear, in order, in the committed file PATH
    <!-- example: if="COMMAND" -->         run only where COMMAND succeeds (in the scratch folder),
                                          else skip, saying why: an output that only a machine
                                          with the CUDA backend built gives, say
    <!-- example: root -->                 needs root (device nodes, mounts); skipped, saying why,
                                          for another user
    <!-- example: timeout=SECONDS -->      longer than the default 120 s
    <!-- example: exit=N -->              the block's last command must exit N (default: any)

Options combine (`<!-- example: measured peer timeout=300 -->`). In the block, a line starting
with `$ ` is a command (a line ending in `\\` continues on the next); the lines after it, up to
the next command, are its output (standard output and standard error together, as a terminal
shows them). A line `...` in an output matches any number of lines. A document's examples run in
order, in one scratch folder per document, so a later example may read what an earlier one wrote;
that folder holds `convbench` on PATH (the build's), links to the repository's configs/, scripts/,
tests/, results/ and build/, and a copy of the document's fixtures: the files of
tests/data/doc-examples/NAME/, NAME being the document's folder with `/` as `-` (`top` for
README.md, `lib-report` for lib/report/README.md), after those of tests/data/doc-examples/shared/
(files two documents show).

A fenced block with a `$ ` command followed by output lines but no marker is an error: every
output shown in the documents is either run here or quoted from a committed record.

    scripts/doc-examples.py --check [DOC.md ...]    exit 1 when an example's output drifted
    scripts/doc-examples.py --update [DOC.md ...]   rewrite the outputs that drifted with what the
                                                    commands print now
    scripts/doc-examples.py --refresh [DOC.md ...]  rewrite every output, drifted or not (measured
                                                    examples: run it on an idle machine)
    scripts/doc-examples.py --list                  the documents and their examples

Without DOC arguments every document is read (README.md and the README.md files under app/,
configs/, lib/, scripts/ and results/). --binary names the convbench to run (default
build/convbench), --only REGEX the examples (by `file:line`) to run.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!--\s*example(?::\s*(?P<opts>.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```|~~~)")
DEFAULT_TIMEOUT = 120
# Measured output: what may change between two runs of the same command.
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
TRUST = re.compile(r"\bok \((?:noisy|disturbed)\)|\s\[(?:noisy|disturbed)\]"
                   r"|; \d+ of \d+ round\(s\) disturbed, both sides side by side in each")
TRUST_LINE = re.compile(r"^- Its run is (?:noisy|disturbed)")
# Warning lines: under a table, in an explanation, or on stderr (a busy machine's, in measured output).
WARNINGS = ("warning: ", "[warning] ", "convbench: warning: ")
# A progress line per finished variant: a redirected run prints them once it has taken 3 s, so
# whether a measured example shows them depends on the machine's speed.
PROGRESS = re.compile(r"^convbench: \d+/\d+ done, \d+ left")
RULE = re.compile(r"-{2,}")
SPACES = re.compile(r"\s+")


@dataclass
class Example:
    doc: Path
    line: int  # 1-based line of the opening fence
    body_start: int  # 0-based index of the first line inside the fence
    body_end: int  # 0-based index of the closing fence
    options: dict
    indent: str = ""  # the fence's indentation (a block inside a list item), given back on rewriting
    commands: list = field(default_factory=list)  # [(command text, [output lines])]

    @property
    def where(self):
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def documents():
    docs = [ROOT / "README.md"]
    for folder in ("app", "configs", "lib", "scripts", "results"):
        docs += sorted((ROOT / folder).rglob("README.md"))
    return [d for d in docs if d.exists()]


def parse_options(text, where):
    options = {}
    for token in shlex.split(text or ""):
        key, _, value = token.partition("=")
        if key not in ("measured", "vary", "cpu", "peer", "root", "if", "recorded", "timeout", "exit"):
            raise SystemExit(f"{where}: unknown example option {key!r}")
        options[key] = value if value else True
    return options


def split_commands(body, where):
    """[(command, [output lines])] from a block's lines."""
    commands, i = [], 0
    while i < len(body):
        line = body[i]
        if not line.startswith("$ "):
            if not commands:
                raise SystemExit(f"{where}: an example must start with a `$ ` command line, found {line!r}")
            commands[-1][1].append(line)
            i += 1
            continue
        command = line[2:]
        # Continuations: a line ending in a backslash, or the shell's `> ` prompt after it.
        while i + 1 < len(body) and (command.endswith("\\") or body[i + 1].startswith("> ")):
            i += 1
            command = command + "\n" + body[i]
        commands.append((command, []))
        i += 1
    return commands


def closing_fence(lines, start, opening):
    """The index of the line closing the fence opened at lines[start] (same indentation and kind)."""
    end = start + 1
    while end < len(lines) and not lines[end].startswith(opening.group(1) + opening.group(2)):
        end += 1
    return end


def unindent(body, indent):
    """A fenced block's lines without the fence's indentation (a block inside a list item)."""
    return [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in body]


def parse(doc):
    lines = doc.read_text().split("\n")
    examples, problems = [], []
    i = 0
    while i < len(lines):
        match = MARKER.match(lines[i].strip())
        fence = FENCE.match(lines[i])
        if match:
            j = i + 1
            opening = FENCE.match(lines[j]) if j < len(lines) else None
            if not opening:
                problems.append(f"{doc.relative_to(ROOT)}:{i + 1}: an example marker must be followed by a fenced block")
                i += 1
                continue
            end = closing_fence(lines, j, opening)
            where = f"{doc.relative_to(ROOT)}:{j + 1}"
            ex = Example(doc, j + 1, j + 1, end, parse_options(match.group("opts"), where), indent=opening.group(1))
            ex.commands = split_commands(unindent(lines[j + 1:end], ex.indent), where)
            examples.append(ex)
            i = end + 1
            continue
        if fence:
            end = closing_fence(lines, i, fence)
            body = unindent(lines[i + 1:end], fence.group(1))
            has_command = any(b.startswith("$ ") for b in body)
            first = next((k for k, b in enumerate(body) if b.startswith("$ ")), None)
            shows_output = first is not None and any(b.strip() and not b.startswith("$ ") and
                                                     not b.rstrip().endswith("\\") for b in body[first + 1:])
            if has_command and shows_output:
                problems.append(f"{doc.relative_to(ROOT)}:{i + 1}: a block shows a command's output but has no "
                                "<!-- example --> marker: run it here, or quote a committed record "
                                "(<!-- example: recorded=PATH -->)")
            i = end + 1
            continue
        i += 1
    return examples, problems


def this_cpu():
    """The CPU model this machine names in results (/proc/cpuinfo's model name), or None."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def normalise(lines, options, cpu=None):
    """The lines as they are compared: exact, or with what a measurement changes taken out.
    `cpu`: a CPU model to compare as any CPU (the document's, or this machine's)."""
    out = [line.rstrip() for line in lines]
    if cpu:
        out = [line.replace(cpu, "<cpu>") for line in out]
    if options.get("measured"):
        vary = re.compile(options["vary"]) if isinstance(options.get("vary"), str) else None
        kept = []
        for line in out:
            if line.startswith(WARNINGS) or PROGRESS.match(line) or TRUST_LINE.match(line) or (
                    vary and vary.search(line)):
                continue
            line = TRUST.sub(lambda m: "ok" if m.group(0).startswith("ok") else "", line)
            line = NUMBER.sub("#", line)
            line = RULE.sub("--", line)
            kept.append(SPACES.sub(" ", line).strip())
        out = kept
    while out and not out[-1]:
        out.pop()
    return out


def matches(expected, actual):
    """expected (with `...` lines matching any run of lines) against actual, both normalised."""
    memo = {}

    def go(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            result = j == len(actual)
        elif expected[i] == "...":
            result = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            result = j < len(actual) and expected[i] == actual[j] and go(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return go(0, 0)


def with_ellipses(expected_raw, actual_raw, options):
    """The actual output, cut where the document cuts it (`...`), for --update."""
    if "..." not in [e.strip() for e in expected_raw]:
        return actual_raw
    exp, act = normalise(expected_raw, {}), actual_raw
    key = (lambda ls: normalise(ls, options))
    out, j = [], 0
    segments, current = [], []
    for line in exp:
        if line.strip() == "...":
            segments.append(current)
            segments.append(None)
            current = []
        else:
            current.append(line)
    segments.append(current)
    for seg in segments:
        if seg is None:
            out.append("...")
            continue
        if not seg:
            continue
        anchor = key([seg[0]])
        found = next((k for k in range(j, len(act)) if key([act[k]]) == anchor), None)
        if found is None:
            return None
        out += act[found:found + len(seg)]
        j = found + len(seg)
    return out


def fixture_folder(doc):
    folder = doc.parent.relative_to(ROOT).as_posix()
    return ROOT / "tests" / "data" / "doc-examples" / ("top" if folder == "." else folder.replace("/", "-"))


def scratch_folder(binary, tmp, doc):
    bindir = tmp / "bin"
    bindir.mkdir()
    (bindir / "convbench").symlink_to(binary)
    for name in ("configs", "scripts", "tests", "results"):
        (tmp / name).symlink_to(ROOT / name)
    (tmp / "build").symlink_to(binary.parent)
    # The peer environment, so that scripts/peer-python.sh (which finds it next to scripts/) uses
    # the one made here instead of making another in the scratch folder.
    for name in (".venv-peers", ".venv-peers.d"):
        if (ROOT / name).exists():
            (tmp / name).symlink_to(ROOT / name)
    for fixtures in (ROOT / "tests" / "data" / "doc-examples" / "shared", fixture_folder(doc)):
        if not fixtures.is_dir():
            continue
        for f in fixtures.iterdir():
            if f.is_dir():
                shutil.copytree(f, tmp / f.name, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copy(f, tmp / f.name, follow_symlinks=False)
    return bindir


def peer_ready():
    ready = ROOT / "scripts" / "setup-peers.sh"
    venv = ROOT / ".venv-peers" / "bin"
    if not venv.is_dir():
        return None, "the peer environment .venv-peers is not made (scripts/setup-peers.sh)"
    if subprocess.run([str(ready), "--ready"], capture_output=True).returncode != 0:
        return None, "the peer environment is not ready (scripts/setup-peers.sh --why)"
    return venv, None


def run_example(ex, workdir, bindir, peer_bin):
    marker = "@@convbench-doc-example-{}@@"
    script = ["cd " + shlex.quote(str(workdir))]
    script.append("__doc_status=0")
    for k, (command, _) in enumerate(ex.commands):
        # The marker must not change $?: a command may be `echo $?` of the one before.
        script.append(f"__doc_status=$?; printf '%s\\n' {shlex.quote(marker.format(k))}; (exit $__doc_status)")
        script.append("\n".join(c[2:] if c.startswith("> ") else c for c in command.split("\n")))
    script.append("__doc_status=$?")
    script.append(f"printf '%s\\n' {shlex.quote(marker.format('end'))} \"$__doc_status\"")
    env = {
        "PATH": (f"{peer_bin}:" if peer_bin else "") + f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir / "home"),
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "100",
        "CONVBENCH": str(bindir / "convbench"),
        "CONVBENCH_CACHE_DIR": str(workdir / "cache"),
        "CONVBENCH_DB": str(workdir / "convbench-history.sqlite"),
        "TMPDIR": str(workdir / "tmp"),
    }
    for d in ("home", "cache", "tmp"):
        (workdir / d).mkdir(exist_ok=True)
    timeout = int(ex.options.get("timeout", DEFAULT_TIMEOUT))
    try:
        proc = subprocess.run(["bash", "-c", "\n".join(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, f"timed out after {timeout} s (timeout=SECONDS raises the limit)"
    text = proc.stdout.decode("utf-8", "backslashreplace")
    text = text.replace(str(workdir) + "/", "").replace(str(workdir), ".")
    outputs, current, status = [], None, None
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        if line == marker.format("end"):
            status = int(lines[k + 1]) if k + 1 < len(lines) and lines[k + 1].isdigit() else None
            break
        if line.startswith("@@convbench-doc-example-"):
            current = []
            outputs.append(current)
        elif current is not None:
            current.append(line)
        k += 1
    if len(outputs) != len(ex.commands):
        return None, status, f"the commands did not all run (bash printed {len(outputs)} of {len(ex.commands)})"
    return outputs, status, None


def condition_holds(command, workdir, bindir):
    env = dict(os.environ, PATH=f"{bindir}:/usr/local/bin:/usr/bin:/bin")
    return subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True).returncode == 0


def check_recorded(ex):
    record = ROOT / ex.options["recorded"]
    if not record.is_file():
        return [f"{ex.where}: recorded={ex.options['recorded']}: no such committed file"]
    have = [line.rstrip() for line in record.read_text(errors="replace").split("\n")]
    problems, j = [], 0
    for _, output in ex.commands:
        for line in output:
            line = line.rstrip()
            if not line or line == "...":
                continue
            while j < len(have) and have[j] != line:
                j += 1
            if j == len(have):
                problems.append(f"{ex.where}: not in {ex.options['recorded']} (in this order): {line}")
                return problems
            j += 1
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    mode.add_argument("--refresh", action="store_true")
    mode.add_argument("--list", action="store_true")
    parser.add_argument("--binary", default=str(ROOT / "build" / "convbench"))
    parser.add_argument("--only", help="run only the examples whose file:line matches this regex")
    parser.add_argument("docs", nargs="*")
    args = parser.parse_args()
    if args.refresh:
        args.update = True

    docs = [Path(d).resolve() for d in args.docs] if args.docs else documents()
    binary = Path(args.binary).resolve()
    if not args.list and not binary.is_file():
        print(f"doc-examples: {binary} not found (build it: scripts/build.sh)", file=sys.stderr)
        return 2
    peer_bin, peer_why = peer_ready()
    failures, ran, skipped = [], 0, 0
    for doc in docs:
        examples, problems = parse(doc)
        failures += problems
        if args.list:
            for ex in examples:
                opts = " ".join(k if v is True else f"{k}={v}" for k, v in ex.options.items())
                print(f"{ex.where}  {ex.commands[0][0].splitlines()[0] if ex.commands else ''}  {opts}")
            continue
        lines = doc.read_text().split("\n")
        replacements = []
        with tempfile.TemporaryDirectory(prefix="convbench-doc-") as tmp:
            workdir = Path(tmp)
            bindir = scratch_folder(binary, workdir, doc)
            for ex in examples:
                if args.only and not re.search(args.only, ex.where):
                    continue
                if "recorded" in ex.options:
                    failures += check_recorded(ex)
                    ran += 1
                    continue
                if ex.options.get("root") and os.geteuid() != 0:
                    print(f"doc-examples: {ex.where}: skipped: needs root", file=sys.stderr)
                    skipped += 1
                    continue
                if "if" in ex.options and not condition_holds(ex.options["if"], workdir, bindir):
                    print(f"doc-examples: {ex.where}: skipped: `{ex.options['if']}` does not hold here", file=sys.stderr)
                    skipped += 1
                    continue
                if ex.options.get("peer") and peer_bin is None:
                    print(f"doc-examples: {ex.where}: skipped: {peer_why}", file=sys.stderr)
                    skipped += 1
                    continue
                outputs, status, why = run_example(ex, workdir, bindir, peer_bin if ex.options.get("peer") else None)
                ran += 1
                if why:
                    failures.append(f"{ex.where}: {why}")
                    continue
                if "exit" in ex.options and status != int(ex.options["exit"]):
                    failures.append(f"{ex.where}: the last command exited {status}, the document says {ex.options['exit']}")
                new_body = []
                drifted = False
                for (command, expected), actual in zip(ex.commands, outputs):
                    while actual and not actual[-1].strip():
                        actual.pop()
                    exp_n = normalise(expected, ex.options, ex.options.get("cpu") if ex.options.get("measured") else None)
                    act_n = normalise(actual, ex.options, this_cpu() if ex.options.get("cpu") else None)
                    ok = matches([e if e != "..." else "..." for e in exp_n], act_n)
                    if not ok:
                        drifted = True
                        if args.check:
                            import difflib
                            diff = "\n".join(difflib.unified_diff(exp_n, act_n, "document", "now", lineterm="", n=2))
                            failures.append(f"{ex.where}: the output of `{command.splitlines()[0]}` drifted from the "
                                            f"document (scripts/doc-examples.py --update rewrites it):\n{diff}")
                    if args.refresh:
                        ok, drifted = False, True
                    new_out = actual if not ok else expected
                    if not ok and args.update:
                        cut = with_ellipses(expected, actual, ex.options)
                        if cut is None:
                            failures.append(f"{ex.where}: cannot place the document's `...` cuts in the new output; "
                                            "edit the example by hand")
                            cut = expected
                        new_out = cut
                    shown = command.split("\n")
                    new_body.append("$ " + shown[0])
                    new_body += shown[1:]
                    new_body += new_out
                if drifted and args.update:
                    replacements.append((ex.body_start, ex.body_end, [ex.indent + b if b else b for b in new_body]))
                    cpu = this_cpu()
                    if "cpu" in ex.options and cpu and ex.options["cpu"] != cpu:
                        # The output now names this machine's CPU: the marker says so.
                        marker_line = ex.body_start - 2
                        lines[marker_line] = lines[marker_line].replace(f'cpu="{ex.options["cpu"]}"', f'cpu="{cpu}"')
        if replacements:
            for start, end, body in sorted(replacements, reverse=True):
                lines[start:end] = body
            doc.write_text("\n".join(lines))
            print(f"doc-examples: rewrote {len(replacements)} example(s) in {doc.relative_to(ROOT)}", file=sys.stderr)
    if args.list:
        for f in failures:
            print(f"error: {f}", file=sys.stderr)
        return 1 if failures else 0
    for f in failures:
        print(f"error: {f}", file=sys.stderr)
    print(f"doc-examples: {ran} example(s) run or checked, {skipped} skipped, {len(failures)} problem(s)",
          file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

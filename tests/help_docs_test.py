#!/usr/bin/env python3
"""Every command's --help is shown in a document, as an example the documentation test runs.

`convbench --help` lists the commands and `convbench history --help` the history's; for each,
some document under README.md, app/, configs/, lib/, scripts/ or results/ must hold an example
(a block after an `<!-- example -->` marker) whose command is `convbench CMD --help`. The
examples themselves are compared with the program's output by scripts/doc-examples.py (ctest
doc_examples_*), so together the two tests make the documents say what --help says.

Usage: help_docs_test.py CONVBENCH SOURCE_DIR
"""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path


def subcommands(binary, *words):
    out = subprocess.run([binary, *words, "--help"], capture_output=True, text=True, check=True).stdout
    names, inside = [], False
    for line in out.splitlines():
        if line.startswith("Subcommands:"):
            inside = True
            continue
        if inside:
            m = re.match(r"^  (\S+)\s", line)
            if m:
                names.append(m.group(1))
            elif line and not line.startswith(" "):
                inside = False
    return names


def main():
    binary, source = sys.argv[1], Path(sys.argv[2])
    # The documents and their examples, read with the documentation test's own parser.
    spec = importlib.util.spec_from_file_location("doc_examples", source / "scripts" / "doc-examples.py")
    doc_examples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc_examples)
    shown = {}
    for doc in doc_examples.documents():
        examples, _ = doc_examples.parse(doc)
        for ex in examples:
            if "recorded" in ex.options:
                continue
            for command, _ in ex.commands:
                shown.setdefault(command.strip(), ex.where)
    wanted = ["convbench --help"]
    wanted += [f"convbench {c} --help" for c in subcommands(binary)]
    wanted += [f"convbench history {c} --help" for c in subcommands(binary, "history")]
    missing = [w for w in wanted if w not in shown]
    for w in wanted:
        print(f"{'ok     ' if w in shown else 'MISSING'}  {w}  {shown.get(w, '')}")
    if missing:
        print(f"FAILED: {len(missing)} of {len(wanted)} commands' --help are in no document's examples "
              "(add `<!-- example -->` blocks running them beside the command's documentation)")
        return 1
    print(f"ok: all {len(wanted)} commands' --help are shown in the documents")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""CONTRIBUTING.md's op table ("Where each op lives") and file names cannot rot.

Every op kind of lib/graph/op_kinds.def has a row, no row names an op kind that is not there,
and every file a row names exists in its column's folder (the folder is the column's heading).
Every other path CONTRIBUTING.md writes in backticks from the repository root (`lib/...cpp`,
`scripts/...py`, ...) exists too (it once sent readers to lib/measure/peer_check.cpp, which had
moved to lib/pipeline/). A file renamed, split or merged without the document following fails here.

usage: contributing_op_table_test.py SOURCE_DIR
"""
import os
import re
import sys

HEADING = "### Where each op lives"


def op_kinds(root):
    with open(os.path.join(root, "lib/graph/op_kinds.def"), encoding="utf-8") as f:
        return re.findall(r"^CONVBENCH_OP_KIND\((\w+)\)", f.read(), re.M)


def table_rows(root):
    """The table after HEADING: its header cells and its rows, split into cells."""
    with open(os.path.join(root, "CONTRIBUTING.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find(HEADING)
    if start < 0:
        sys.exit(f"CONTRIBUTING.md: no section '{HEADING}'")
    block = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            break  # the first table of the section only
    if len(block) < 3:
        sys.exit(f"CONTRIBUTING.md: '{HEADING}' has no table")
    cells = [[c.strip() for c in l.strip().strip("|").split("|")] for l in block]
    return cells[0], cells[2:]


# A path from the repository root with a file extension; placeholders (`lib/ops/<op>.cpp`) have
# characters outside the pattern and are not taken for paths.
ROOT_PATH = re.compile(r"`((?:lib|app|kernels|tests|scripts|configs|cmake|results)/[\w./-]+\.\w+)`")


def missing_paths(root):
    with open(os.path.join(root, "CONTRIBUTING.md"), encoding="utf-8") as f:
        paths = sorted(set(ROOT_PATH.findall(f.read())))
    return paths, [p for p in paths if not os.path.exists(os.path.join(root, p))]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    header, rows = table_rows(root)
    errors = []
    # Columns whose heading is a folder in backticks hold file names in that folder.
    folders = {i: m.group(1) for i, h in enumerate(header) if (m := re.fullmatch(r"`([\w/]+/)`", h))}
    if not folders:
        errors.append("the table's headings name no folder")
    kinds = op_kinds(root)
    seen = []
    for row in rows:
        if len(row) != len(header):
            errors.append(f"row {row[0]!r}: {len(row)} cells, the heading has {len(header)}")
            continue
        seen.append(row[0])
        for i, folder in folders.items():
            for name in re.findall(r"`([^`]+)`", row[i]):
                if not os.path.isfile(os.path.join(root, folder, name)):
                    errors.append(f"row {row[0]}: {folder}{name} does not exist")
    for kind in kinds:
        if kind not in seen:
            errors.append(f"op kind {kind} (lib/graph/op_kinds.def) has no row")
    for op in seen:
        if op not in kinds:
            errors.append(f"row {op}: not an op kind of lib/graph/op_kinds.def")
        elif seen.count(op) > 1:
            errors.append(f"row {op}: more than once")
    paths, missing = missing_paths(root)
    for e in sorted(set(errors)):
        print(f"CONTRIBUTING.md '{HEADING}': {e}")
    for p in missing:
        print(f"CONTRIBUTING.md: {p} does not exist")
    if errors or missing:
        return 1
    print(f"{len(seen)} ops, every file present; {len(paths)} other paths, each present")
    return 0


if __name__ == "__main__":
    sys.exit(main())

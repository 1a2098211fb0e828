#!/usr/bin/env python3
"""Every relative link in the repository's Markdown documents leads somewhere: the file (or
folder) exists, and a `#fragment` names a heading of the target as GitHub makes its anchors
(lowercase, punctuation dropped, spaces as hyphens, -1, -2 for repeated headings).

A document that moved or a heading that was reworded otherwise leaves readers at a dead link, and
the README's task table is made of such links.

    doc_links_test.py REPO_ROOT
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "*.md"], check=True, capture_output=True, text=True)
    return [p for p in out.stdout.splitlines() if p]


def prose_lines(path):
    """The lines outside fenced code blocks (a link inside an example is the example's text)."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, line


def slug(heading):
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its words
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache):
    if path not in cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', open(path, encoding="utf-8").read()):
            found.add(m.group(1))
        cache[path] = found
    return cache[path]


def main():
    root = os.path.abspath(sys.argv[1])
    cache = {}
    broken = []
    checked = 0
    for doc in markdown_files(root):
        full = os.path.join(root, doc)
        for number, line in prose_lines(full):
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("mailto:"):
                    continue  # an absolute URL: not this test's to fetch
                path, _, fragment = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(full), path)) if path else full
                checked += 1
                where = f"{doc}:{number}"
                if not os.path.exists(dest):
                    broken.append(f"{where}: {target}: no such file")
                    continue
                if fragment and dest.endswith(".md") and fragment not in anchors(dest, cache):
                    broken.append(f"{where}: {target}: {os.path.relpath(dest, root)} has no heading #{fragment}")
    for b in broken:
        print(b)
    if broken:
        print(f"FAIL: {len(broken)} of {checked} relative links lead nowhere")
        return 1
    print(f"ok: {checked} relative links, each to a file and heading that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())

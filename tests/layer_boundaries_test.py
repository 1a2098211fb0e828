#!/usr/bin/env python3
"""The library's layers may include only downwards (cmake/layers.cmake).

For every layer L and every layer M, preprocesses `#include "<M>/<a header of M>"` with the exact
flags a source file of L is compiled with (compile_commands.json) and checks that it resolves
exactly when M is L itself or below it in the order lib/README.md "Layout of the code" documents. So the
CMake wiring cannot drift from the documented order in either direction: an upward include fails
to build, and a layer cannot lose a dependency it is meant to have.

usage: layer_boundaries_test.py SOURCE_DIR BUILD_DIR
"""
import json
import re
import os
import shlex
import subprocess
import sys
import tempfile

# Each layer and the layers it may include (besides itself), transitively closed below.
BELOW = {
    "util": [],
    "graph": ["util"],
    "ops": ["graph", "util"],
    "spec": ["ops", "graph", "util"],
    "transforms": ["ops", "graph", "util"],
    "variants": ["spec", "transforms", "ops", "graph", "util"],
    "runtime": ["ops", "graph", "util"],
    "analysis": ["runtime", "ops", "graph", "util"],
    "backends": ["runtime", "ops", "graph", "util"],
    "results": ["analysis", "runtime", "spec", "ops", "graph", "util"],
    "report": ["results", "analysis", "runtime", "spec", "ops", "graph", "util"],
    "explain": ["results", "analysis", "runtime", "spec", "ops", "graph", "util"],
    "measure": ["results", "analysis", "runtime", "spec", "ops", "graph", "util"],
    "sweep": ["results", "analysis", "runtime", "spec", "variants", "transforms", "ops", "graph", "util"],
    "history": ["report", "results", "analysis", "runtime", "spec", "ops", "graph", "util"],
    "pipeline": ["explain", "report", "measure", "backends", "sweep", "results", "analysis", "runtime", "spec", "variants",
                 "transforms", "ops", "graph", "util"],
}


def main():
    source_dir, build_dir = sys.argv[1], sys.argv[2]
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        commands = json.load(f)
    # One compile command per layer: a source file directly in lib/<layer>/.
    command_of = {}
    for entry in commands:
        rel = os.path.relpath(entry["file"], os.path.join(source_dir, "lib"))
        parts = rel.split(os.sep)
        layer = None
        if len(parts) == 2 and parts[0] in BELOW and parts[1].endswith(".cpp"):
            layer = parts[0]
        # A unity batch of the layer's files (CONVBENCH_UNITY): CMakeFiles/convbench_<layer>.dir/Unity/
        unity = re.search(r"/CMakeFiles/convbench_(\w+)\.dir/Unity/unity_\d+_cxx\.cxx$", entry["file"])
        if unity and unity.group(1) in BELOW:
            layer = unity.group(1)
        if layer:
            args = entry.get("arguments") or shlex.split(entry["command"])
            command_of.setdefault(layer, (entry["directory"], args))
    missing = sorted(set(BELOW) - set(command_of))
    if missing:
        sys.exit(f"FAIL: no compile command for the layer(s) {missing} in {build_dir}/compile_commands.json")
    # The smallest header of each layer: the probe tests the include path, not the header.
    header_of = {}
    for layer in BELOW:
        folder = os.path.join(source_dir, "lib", layer)
        headers = [h for h in os.listdir(folder) if h.endswith(".hpp")]
        header_of[layer] = min(headers, key=lambda h: os.path.getsize(os.path.join(folder, h)))

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for layer, (directory, args) in sorted(command_of.items()):
            for other in sorted(BELOW):  # gcc: "No such file", clang: "file not found"
                probe = os.path.join(tmp, f"{layer}_includes_{other}.cpp")
                with open(probe, "w") as f:
                    f.write(f'#include "{other}/{header_of[other]}"\n')
                cmd = [args[0]]
                skip = False
                for a in args[1:]:
                    if skip:
                        skip = False
                        continue
                    if a in ("-o", "-c", "-MF", "-MT", "-MQ"):
                        skip = True
                        continue
                    if a in ("-MD", "-MMD") or (a.endswith((".cpp", ".cxx")) and not a.startswith("-")):
                        continue  # dependency files and the layer's own source file
                    cmd.append(a)
                cmd += ["-E", probe, "-o", os.devnull]
                done = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
                allowed = other == layer or other in BELOW[layer]
                found = done.returncode == 0
                if allowed and not found:
                    failures.append(f"{layer} may include {other}/ but cannot: {done.stderr.strip()[:300]}")
                elif not allowed and found:
                    failures.append(f"{layer} must not include {other}/ (a layer above it) but can")
                elif not allowed and not any(m in done.stderr for m in ("No such file", "file not found")):
                    failures.append(f"{layer} including {other}/ failed for another reason: {done.stderr.strip()[:300]}")
    checked = len(command_of) * len(BELOW)
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)
    print(f"ok: {checked} layer pairs, every include path as documented")


if __name__ == "__main__":
    main()

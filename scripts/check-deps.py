#!/usr/bin/env python3
"""Checks that a fresh Debian 12 machine gets everything the build and the tests use.

scripts/setup.sh installs its package list with --no-install-recommends. This check takes every
file the CMake configure found (the PATH and FILEPATH entries of CMakeCache.txt: *_DIR,
*_LIBRARY, *_INCLUDE_DIR, *_EXECUTABLE, *_PROGRAM, the compilers and tools) and every module the
Python tests import, finds the Debian package each file belongs to (dpkg -S), and fails when that
package is neither in setup.sh's list, nor pulled in by it as a dependency
(apt-cache depends --recurse --no-recommends ...), nor part of the base system (Priority:
required, what debootstrap's minbase installs). A machine that had the package installed by hand
builds and passes anyway; a new user's machine would not: this check is what catches it.

Files that belong to no Debian package are accepted only under the CUDA toolkit's folder (NVIDIA's
installer puts it there; the CUDA backend is optional and built only when it is found).

Modules the Debian Python lacks are accepted when the peer environment (--peer-python, made by
scripts/setup-peers.sh) imports them from a distribution pinned in --peer-requirements; when that
environment is not ready they are listed as not checked.

Usage: check-deps.py --cache build/CMakeCache.txt [--cache-if-present build-clang/CMakeCache.txt]
                     --setup scripts/setup.sh [--python PYTHON] [--source .] [-v]
                     [--peer-python .venv-peers/bin/python --peer-requirements scripts/requirements-peers.txt]
Exit: 0 when everything is covered, 1 when something is not (each named with its fix),
2 for bad usage. Prints "SKIP: ..." and exits 0 on a machine without dpkg and apt (not Debian).
"""

import argparse
import ast
import glob
import json
import os
import re
import shutil
import subprocess
import sys


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(0)


def os_release():
    """The fields of /etc/os-release (ID, VERSION_ID, PRETTY_NAME, ...)."""
    fields = {}
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            for line in f:
                if "=" in line:
                    key, value = line.rstrip("\n").split("=", 1)
                    fields[key] = value.strip('"')
    except OSError:
        pass
    return fields


def cache_value(cache, key):
    """The value of one entry of a CMakeCache.txt, or None."""
    with open(cache, encoding="utf-8") as f:
        for line in f:
            if line.startswith(key + ":") and "=" in line:
                return line.rstrip("\n").split("=", 1)[1]
    return None


def read_cache_paths(cache, ignore_under):
    """(key, path) for every PATH / FILEPATH entry of a CMakeCache.txt naming an existing file."""
    found = []
    with open(cache, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith(("#", "//")) or "=" not in line or ":" not in line.split("=", 1)[0]:
                continue
            head, value = line.split("=", 1)
            key, kind = head.rsplit(":", 1)
            if kind not in ("PATH", "FILEPATH") or key.startswith("CMAKE_INSTALL_"):
                continue
            for path in value.split(";"):
                if not path.startswith("/") or path.endswith("-NOTFOUND") or not os.path.exists(path):
                    continue
                real = os.path.realpath(path)
                if any(real == d or real.startswith(d + os.sep) for d in ignore_under):
                    continue  # the project's own source and build folders
                found.append((key, path))
    return found


def imported_modules(source):
    """Top-level names of every module imported by the Python tests and the scripts they run."""
    files = []
    for folder in ("tests", "scripts"):
        files += glob.glob(os.path.join(source, folder, "*.py")) + glob.glob(os.path.join(source, folder, "*", "*.py"))
    # The project's own modules: the files next to the scripts, and their packages (scripts/peer/).
    local = {os.path.splitext(os.path.basename(f))[0] for f in files}
    local |= {os.path.basename(os.path.dirname(f)) for f in files if os.path.basename(f) == "__init__.py"}
    names = {}
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                if top not in local:
                    names.setdefault(top, os.path.relpath(path, source))
    return names


def module_origins(python, names):
    """{module: file it is loaded from, or None when it is built in / not found} in `python`."""
    probe = (
        "import importlib.util, json, sys\n"
        "out = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        spec = importlib.util.find_spec(name)\n"
        "    except Exception as e:\n"
        "        out[name] = ['error', str(e)]\n"
        "        continue\n"
        "    if spec is None:\n"
        "        out[name] = ['missing', None]\n"
        "    elif spec.origin in (None, 'built-in', 'frozen'):\n"
        "        out[name] = ['builtin', None]\n"
        "    else:\n"
        "        out[name] = ['file', spec.origin]\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run([python, "-c", probe, *sorted(names)], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def peer_modules(python, requirements, names):
    """{module: None when the peer environment imports it from a pinned distribution, else why
    not}. Not checked (and said so) when the environment is not there."""
    if not names:
        return {}
    if not python or not os.access(python, os.X_OK):
        print(f"check-deps: not checked, the peer environment is not ready: {', '.join(sorted(names))}")
        return {}
    with open(requirements) as f:
        pinned = {line.split("==")[0].strip().lower().replace("_", "-") for line in f
                  if "==" in line and not line.lstrip().startswith("#")}
    probe = ("import importlib.metadata as m, importlib.util, json, sys\n"
             "d = m.packages_distributions()\n"
             "print(json.dumps({n: (d.get(n) if importlib.util.find_spec(n) else None) for n in sys.argv[1:]}))\n")
    found = json.loads(subprocess.run([python, "-c", probe, *sorted(names)], capture_output=True, text=True,
                                      check=True).stdout)
    out = {}
    for name in names:
        dists = [d.lower().replace("_", "-") for d in (found.get(name) or [])]
        if found.get(name) is None:
            out[name] = f"not importable in the peer environment {python} either"
        elif not any(d in pinned for d in dists):
            out[name] = f"the peer environment has it from {dists}, not pinned in {requirements}"
        else:
            out[name] = None
    return out


def owners(path):
    """Debian packages that own `path` (also through symlinks and merged-/usr aliases)."""
    candidates = [path, os.path.realpath(path)]
    for p in list(candidates):
        for a, b in (("/usr/lib/", "/lib/"), ("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/")):
            if p.startswith(a):
                candidates.append(b + p[len(a):])
            elif p.startswith(b):
                candidates.append(a + p[len(b):])
    for candidate in dict.fromkeys(candidates):
        result = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        pkgs = set()
        for line in result.stdout.splitlines():
            if line.startswith("diversion by") or ": " not in line:
                continue
            listed, owned = line.rsplit(": ", 1)
            if owned != candidate:
                continue  # dpkg -S matches patterns: keep exact paths only
            pkgs.update(p.strip().split(":")[0] for p in listed.split(","))
        if pkgs:
            return sorted(pkgs)
    return []


def setup_packages(setup):
    result = subprocess.run(["bash", setup, "--list"], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check-deps: `{setup} --list` failed: {result.stderr.strip()}")
    return [p for p in result.stdout.split() if p]


def dependency_closure(packages):
    """The packages apt installs for `packages` with --no-install-recommends (and the names)."""
    cmd = ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
           "--no-breaks", "--no-replaces", "--no-enhances", *packages]
    result = subprocess.run(cmd, capture_output=True, text=True)
    closure = set(packages)
    for line in result.stdout.splitlines():
        if line and not line[0].isspace() and not line.startswith("<"):
            closure.add(line.split(":")[0])
        elif line.startswith("    ") and not line.strip().startswith("<"):
            closure.add(line.strip().split(":")[0])  # a provider of a virtual dependency
    return closure


def base_system():
    """Installed packages of Priority required: what every Debian system has (debootstrap minbase)."""
    result = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Priority}\t${Essential}\n"],
                            capture_output=True, text=True, check=True)
    base = set()
    for line in result.stdout.splitlines():
        name, priority, essential = (line.split("\t") + ["", ""])[:3]
        if priority == "required" or essential == "yes":
            base.add(name)
    return base


def cuda_roots(cache_paths):
    """The CUDA toolkit's folder(s), from the bin folder FindCUDAToolkit resolved (nvcc -v)."""
    roots = set()
    for key, path in cache_paths:
        if key == "CUDAToolkit_BIN_DIR":
            roots.add(os.path.dirname(os.path.realpath(path)))
    if not roots:  # an older cache: fall back on nvcc's own folder
        for key, path in cache_paths:
            if key in ("CUDAToolkit_NVCC_EXECUTABLE", "CMAKE_CUDA_COMPILER"):
                roots.add(os.path.dirname(os.path.dirname(os.path.realpath(path))))
    return roots


def in_cuda(path, roots):
    """Inside the toolkit, or a small launcher script that runs a program inside it (a machine may put
    `exec /usr/local/cuda-13.0/bin/nvcc "$@"` in /usr/local/bin/nvcc; which nvcc CMake finds then depends
    on PATH's order, and the check's verdict must not)."""
    real = os.path.realpath(path)
    if any(real == r or real.startswith(r + os.sep) for r in roots):
        return True
    try:
        if os.path.getsize(real) > 4096:
            return False
        with open(real, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return False
    return text.startswith("#!") and any(re.search(r"\bexec\s+" + re.escape(r) + "/", text) for r in roots)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", required=True, action="append",
                        help="CMakeCache.txt of a configured build (repeat for several builds)")
    parser.add_argument("--cache-if-present", action="append", default=[],
                        help="another build's CMakeCache.txt, checked when it exists (e.g. build-clang's)")
    parser.add_argument("--setup", required=True, help="scripts/setup.sh")
    parser.add_argument("--python", help="the interpreter the Python tests run with "
                        "(default: CONVBENCH_PYTHON of the first cache, else this one)")
    parser.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("-v", "--verbose", action="store_true", help="print every file and its package")
    parser.add_argument("--peer-python", help="the peer environment's interpreter (scripts/setup-peers.sh)")
    parser.add_argument("--peer-requirements", help="the peer environment's pinned list")
    args = parser.parse_args()

    if not shutil.which("dpkg-query") or not shutil.which("apt-cache"):
        skip("no dpkg-query / apt-cache here: the check is about fresh Debian 12 machines")
    release = os_release()
    if release.get("ID") != "debian" or release.get("VERSION_ID") != "12":
        skip(f"this is {release.get('PRETTY_NAME', 'not Debian')}: the check is about fresh Debian 12 machines, "
             "whose package names scripts/setup.sh uses")
    caches = list(args.cache)
    for cache in caches:
        if not os.path.isfile(cache):
            print(f"check-deps: no {cache}: configure first (scripts/build.sh)", file=sys.stderr)
            sys.exit(2)
    for cache in args.cache_if_present:
        if os.path.isfile(cache):
            caches.append(cache)
        else:
            print(f"check-deps: {cache} is not there (not configured yet): not checked")

    if not args.python:
        args.python = cache_value(caches[0], "CONVBENCH_PYTHON") or sys.executable
    source = os.path.realpath(args.source)
    used, cuda = [], set()
    for cache in caches:
        build = os.path.realpath(os.path.dirname(cache))
        entries = read_cache_paths(cache, [source, build])
        name = os.path.relpath(cache, source) if cache.startswith(source) else cache
        used += [(f"{name}: {key}", path) for key, path in entries]
        cuda |= cuda_roots(entries)
    modules = imported_modules(source)
    peer_only = []
    for name, (kind, origin) in module_origins(args.python, modules).items():
        where = f"Python module `{name}` (imported by {modules[name]}, {args.python})"
        if kind == "file":
            used.append((where, origin))
        elif kind in ("missing", "error"):
            if args.peer_requirements:
                peer_only.append(name)
            else:
                used.append((where, None))
    for name, why in peer_modules(args.peer_python, args.peer_requirements, peer_only).items():
        if why is not None:
            used.append((f"Python module `{name}` (imported by {modules[name]}): {why}", None))

    listed = setup_packages(args.setup)
    allowed = dependency_closure(listed) | base_system()
    problems, outside, checked = [], [], 0
    for what, path in used:
        if path is None:
            problems.append(f"{what} is not importable: the tests need it. Fix: add the Debian package that "
                            f"provides it (apt-cache search) to the packages in {args.setup}, or pin it in "
                            f"scripts/requirements-peers.txt for a peer-environment test.")
            continue
        checked += 1
        pkgs = owners(path)
        if args.verbose:
            print(f"{what} = {path}: {', '.join(pkgs) or 'no Debian package'}")
        if not pkgs:
            if in_cuda(path, cuda):
                outside.append(path)
                continue
            problems.append(f"{what} = {path} belongs to no Debian package: a fresh machine will not have it. "
                            f"Fix: find the Debian package that provides it, install that instead, and add it "
                            f"to the packages in {args.setup}.")
            continue
        if not any(p in allowed for p in pkgs):
            problems.append(f"{what} = {path} comes from the Debian package {' or '.join(pkgs)}, which {args.setup} "
                            f"neither installs nor pulls in as a dependency (with --no-install-recommends), and "
                            f"which is not part of the base system: a fresh machine will not have it. "
                            f"Fix: add {pkgs[0]} to the packages in {args.setup}.")

    for p in problems:
        print(f"error: {p}")
    cuda_note = f"; {len(outside)} from the CUDA toolkit in {', '.join(sorted(cuda))} (optional, not Debian)" \
        if outside else ""
    verdict = "FAILED" if problems else "ok"
    print(f"check-deps: {verdict}: {checked} files checked against {len(listed)} packages of {args.setup} "
          f"and their dependencies ({len(allowed)} with the base system){cuda_note}; {len(problems)} not covered")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

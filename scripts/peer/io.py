"""The peer's files: the resolved spec it builds from, and the JSON it writes.

The peer does not parse specs. convbench resolves them (`convbench validate SPEC --resolved-json
-`: every block at every sweep point, every variant, every custom op with all defaults applied),
so the spec's rules live in one place; the peer still computes every number itself."""

import json
import math
import os
import shutil
import subprocess

RESOLVED_SCHEMA = "convbench.resolved-spec/1"


class InputError(Exception):
    pass


def find_convbench(explicit=None):
    """--convbench, else $CONVBENCH, else the repository's build/convbench, else `convbench` on
    PATH."""
    if explicit:
        return explicit
    if os.environ.get("CONVBENCH"):
        return os.environ["CONVBENCH"]
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "build", "convbench")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("convbench")
    if found:
        return found
    raise InputError("no convbench binary to resolve the spec with: build it (scripts/build.sh), or give "
                     "--convbench PATH or a resolved spec (convbench validate SPEC --resolved-json FILE)")


def read_resolved(text, where):
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise InputError(f"{where}: not JSON: {e}") from e
    if not isinstance(doc, dict) or doc.get("schema") != RESOLVED_SCHEMA:
        raise InputError(f"{where}: not a resolved spec (schema {RESOLVED_SCHEMA})")
    return doc


def load_spec(path, convbench=None, sweeps=()):
    """(spec name, blocks, sha256 of the spec file). Blocks are block-major x sweep points, each
    with its variants, as convbench resolved them. `path` is a spec (resolved by running
    convbench, with `--sweep` for each of `sweeps`) or an already resolved spec."""
    doc = load_resolved(path, convbench, sweeps)
    return doc["name"], doc["blocks"], doc["sha256"]


def load_resolved(path, convbench=None, sweeps=()):
    """The whole resolved spec (blocks and networks) of `path`, as load_spec reads it."""
    if path.endswith(".json"):
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot read: {e.strerror}") from e
        try:
            if json.loads(text).get("schema") == RESOLVED_SCHEMA:
                return read_resolved(text, path)
        except (ValueError, AttributeError):
            pass  # a JSON spec (or a broken one): convbench says what is wrong with it
    binary = find_convbench(convbench)
    try:
        args = [binary, "validate", path, "--resolved-json", "-"]
        for sweep in sweeps:
            args += ["--sweep", sweep]
        run = subprocess.run(args, capture_output=True, text=True)
    except OSError as e:
        raise InputError(f"cannot run {binary}: {e.strerror}") from e
    if run.returncode != 0:
        raise InputError(run.stderr.strip() or f"{binary} validate {path} exited {run.returncode}")
    return read_resolved(run.stdout, f"{binary} validate {path} --resolved-json -")


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


def finite(value):
    """JSON has no inf/nan: a noise of inf (one sample) becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value

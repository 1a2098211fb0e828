#!/usr/bin/env python3
"""`convbench history` end to end, as its users meet it: runs added from real `compare` output and
from files derived from it, the tables read with the sqlite3 shell, `check` exit codes on an
injected step, the export read by pandas, the trend page rendered by Chromium, two processes
adding at once losing nothing, and bad input (another results schema, a newer, corrupt, locked
or read-only database) refused with exit 2 and the database left unchanged.

usage: history_cli_test.py CONVBENCH SOURCE_DIR
"""
import copy
import hashlib
import io
import json
import os
import random
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def quantile(sorted_v, q):
    pos = q * (len(sorted_v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def set_samples(stats, raw):
    s = sorted(raw)
    stats.update({"raw_ms": raw, "samples": len(raw), "min": s[0], "max": s[-1], "median": quantile(s, 0.5),
                  "q1": quantile(s, 0.25), "q3": quantile(s, 0.75), "mean": sum(raw) / len(raw)})


def derived_run(template, index, scale, rng):
    """The measured file with new samples around `scale` times its medians, another commit and date."""
    doc = copy.deepcopy(template)
    doc["provenance"]["git_commit"] = "%012x" % (0xabc000 + index)
    doc["provenance"]["date"] = "2026-11-%02dT12:00:00Z" % (1 + index % 28)
    for row in doc["results"]:
        row.pop("host_activity", None)  # synthetic samples: no interference evidence to carry
        row.pop("clock", None)
        times = row.get("time_ms", {})
        original = {phase: stats["median"] for phase, stats in times.items()}
        for phase, stats in times.items():
            base = stats["median"] * scale
            if phase == "step" and "forward" in times and "backward" in times:
                # a step as long as its phases: the template may have been timed on a busy machine,
                # where they contradict each other (and trust would call every derived run disturbed)
                base = (original["forward"] + original["backward"]) * scale
            set_samples(stats, [base * (1 + rng.gauss(0, 0.01)) for _ in range(12)])
    return doc


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.exists(path) else None


def long_name_filters(binary, tmp, template, rng):
    """--filter over 30,000- and 1,000,000-character block names, on a 1 MiB stack (issue 37,
    item 5): std::regex recursed per character and overflowed from about 30,000; RE2 does not."""
    db = os.path.join(tmp, "long.sqlite")
    files = []
    for i, n in enumerate((30000, 1000000)):
        doc = derived_run(template, 60 + i, 1.0, rng)
        for row in doc["results"]:
            row["block"] = "z" * n + row["block"]
        files.append(os.path.join(tmp, f"long{i}.json"))
        write(files[-1], doc)
    r = run([binary, "history", "add", *files, "--db", db])
    check(r.returncode == 0, f"history add of long names: {r.returncode} {r.stderr[-300:]}")
    small_stack = lambda: resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))
    for pattern, series in ((".*", True), ("^z+", True), ("(z|y)*q", False), ("^(z*)*$", False), ("z+.*/ separable", True)):
        r = run([binary, "history", "list", "--db", db, "--filter", pattern], preexec_fn=small_stack)
        check(r.returncode == 0 and (re.search(r"^0 series,", r.stdout, re.M) is None) == series,
              f"history list --filter {pattern} over long names: {r.returncode} {r.stdout[-200:]} {r.stderr[-300:]}")


def static_site(binary, tmp, db, rows, chromium):
    """`history site DIR` over a 40-run history: an index, a page per series and per commit, every
    link resolving to a page of the site, no script and nothing fetched, rendered by Chromium with a
    sparkline per series and a trend plot on a series page; DIR that is a file refused (exit 2)."""
    site = os.path.join(tmp, "site")
    r = run([binary, "history", "site", site, "--db", db])
    check(r.returncode == 0 and "wrote" in r.stdout, f"history site: {r.returncode} {r.stdout} {r.stderr}")
    pages = sorted(os.listdir(site)) if os.path.isdir(site) else []
    series = [p for p in pages if p.startswith("series-")]
    commits = [p for p in pages if p.startswith("commit-")]
    check("index.html" in pages and len(series) == rows and len(commits) == 40,
          f"site pages: {len(series)} series (want {rows}), {len(commits)} commits (want 40)")
    for name in pages:
        html = open(os.path.join(site, name), encoding="utf-8").read()
        check("<script" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', ""),
              f"{name}: a script or an external reference")
        for href in re.findall(r'href="([^"]*)"', html):
            check(href in pages, f"{name}: link to {href}, which the site does not have")
    if chromium:
        index = os.path.join(site, "index.html")
        dom = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + index],
                  timeout=120)
        sparks, links = dom.stdout.count('class="spark"'), dom.stdout.count('<a href="series-')
        check(sparks == rows and links == rows,
              f"chromium's index: {sparks} sparklines and {links} series links, want {rows}: {dom.stderr[-300:]}")
        if series:
            dom = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                       "file://" + os.path.join(site, series[0])], timeout=120)
            check(dom.stdout.count('class="trend"') == 1 and dom.stdout.count("<tr>") >= 40,
                  f"chromium's series page: {dom.stderr[-300:]}")
    not_a_folder = os.path.join(tmp, "site-file")
    open(not_a_folder, "w").write("x")
    r = run([binary, "history", "site", not_a_folder, "--db", db])
    check(r.returncode == 2 and "not a folder" in r.stderr and open(not_a_folder).read() == "x",
          f"site into a file: {r.returncode} {r.stderr}")


def main():
    binary, source = sys.argv[1], sys.argv[2]
    rng = random.Random(17)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.environ.get("HISTORY_TEST_KEEP", tmp)
        db = os.path.join(tmp, "h.sqlite")
        spec = os.path.join(source, "tests/data/results/readme-spec.yaml")
        measured = os.path.join(tmp, "measured.json")
        # A real run, added by compare --db itself; its --json added again is the same run.
        r = run([binary, "compare", spec, "--device", "cpu", "--min-time", "0", "--min-samples", "5", "--timeout",
                 "0.5", "-q", "--json", measured, "--db", db, "--sweep", "batch=1,2"])
        check(r.returncode == 0, f"compare --db exited {r.returncode}: {r.stderr}")
        r = run([binary, "history", "add", measured, "--db", db])
        check(r.returncode == 0 and "already in the history" in r.stderr and "added 0 run(s)" in r.stdout,
              f"the --json of a compare --db run added again: {r.returncode} {r.stdout} {r.stderr}")
        template = json.load(open(measured))
        check(all(len(row.get("graph_hash", "")) == 64 for row in template["results"]), "rows without graph_hash")
        rows = len(template["results"])

        # Twelve more runs of the same build, then one 25% slower (the step) and one 2% slower.
        files = []
        for i in range(12):
            files.append(os.path.join(tmp, f"run{i}.json"))
            write(files[-1], derived_run(template, i, 1.0, rng))
        r = run([binary, "history", "add", *files, "--db", db])
        check(r.returncode == 0 and f"added 12 run(s), {12 * rows} measurement(s), 0 new series" in r.stdout,
              f"history add: {r.returncode} {r.stdout} {r.stderr}")
        slow, same = os.path.join(tmp, "slow.json"), os.path.join(tmp, "same.json")
        write(slow, derived_run(template, 20, 1.25, rng))
        write(same, derived_run(template, 21, 1.0, rng))
        r = run([binary, "history", "check", slow, "--db", db])
        check(r.returncode == 1 and "SLOWER" in r.stdout and "Mann-Whitney p=" in r.stdout,
              f"check of a 25% slower run: exit {r.returncode}\n{r.stdout}{r.stderr}")
        r = run([binary, "history", "check", same, "--db", db])
        check(r.returncode == 0 and "Result: no regression (exit code 0)" in r.stdout,
              f"check of a run like the others: exit {r.returncode}\n{r.stdout}{r.stderr}")

        # The sqlite3 shell reads the documented tables.
        if shutil.which("sqlite3"):
            r = run(["sqlite3", db, ".tables"])
            check(r.stdout.split() == ["measurements", "runs", "series", "trend"], f".tables: {r.stdout}")
            r = run(["sqlite3", "-csv", db, "SELECT count(*), count(DISTINCT series_id) FROM measurements;"
                     "SELECT count(*) FROM runs; SELECT count(*) FROM trend WHERE median_ms > 0"])
            check(r.stdout.split() == [f"{13 * rows},{rows}", "13", str(13 * rows)], f"sqlite3 counts: {r.stdout}")
        else:
            check(False, "no sqlite3 shell (scripts/setup.sh installs it)")

        r = run([binary, "history", "list", "--db", db])
        check(r.returncode == 0 and f"{rows} series, {13 * rows} measurements" in r.stdout, f"list: {r.stdout}")
        r = run([binary, "history", "show", "--db", db, "--filter", "separable", "--last", "5"])
        check(r.returncode == 0 and r.stdout.count(" / separable (") == 2 and "the last 5 shown" in r.stdout,
              f"show: {r.stdout}{r.stderr}")
        long_name_filters(binary, tmp, template, rng)

        # pandas reads the export.
        try:
            import pandas as pd
            r = run([binary, "history", "export", "--db", db])
            df = pd.read_csv(io.StringIO(r.stdout))
            check(len(df) == 13 * rows and pd.api.types.is_float_dtype(df["median_ms"]) and
                  pd.api.types.is_integer_dtype(df["peak_bytes"]), f"export csv: {df.dtypes}")
            trend = df.groupby(["variant", "point"])["median_ms"].median()
            check(len(trend) == rows, f"pandas groupby: {trend}")
            out = os.path.join(tmp, "h.json")
            r = run([binary, "history", "export", "--db", db, "--format", "json", "-o", out])
            dj = pd.read_json(out, orient="records")
            check(r.returncode == 0 and len(dj) == 13 * rows and
                  all(len(raw) == n and n >= 1 for raw, n in zip(dj["raw_ms"], dj["samples"])),
                  f"export json: {r.stderr} {dj.head()}")
        except ImportError:
            check(False, "pandas not importable (scripts/setup.sh installs python3-pandas)")

        # The trend page: self-contained, one plot per series, rendered by Chromium.
        page = os.path.join(tmp, "trend.html")
        r = run([binary, "history", "report", "--db", db, "--html", page])
        html = open(page).read() if os.path.exists(page) else ""
        check(r.returncode == 0 and html.count("<svg") == rows and "http://" not in html.replace(
            'xmlns="http://www.w3.org/2000/svg"', "") and "<script" not in html, f"report --html: {r.stderr}")
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium:
            png = os.path.join(tmp, "trend.png")
            c = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     f"--screenshot={png}", "--window-size=800,1200", "file://" + page], timeout=120)
            check(os.path.exists(png) and os.path.getsize(png) > 5000, f"chromium did not render: {c.stderr[-500:]}")
            dom = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + page],
                      timeout=120)
            check(dom.stdout.count("<polyline") == rows,
                  f"chromium's DOM has {dom.stdout.count('<polyline')} median lines, not {rows}: {dom.stderr[-300:]}")
        else:
            check(False, "chromium not installed (scripts/setup.sh installs it)")

        # Two processes adding at once lose nothing.
        conc = os.path.join(tmp, "concurrent.sqlite")
        batches = [[], []]
        for i in range(40):
            f = os.path.join(tmp, f"c{i}.json")
            write(f, derived_run(template, 100 + i, 1.0, rng))
            batches[i % 2].append(f)
        procs = []
        for b in batches:  # one add per file, so the two processes interleave their transactions
            script = " && ".join(f"{binary} history add {f} --db {conc} >/dev/null" for f in b)
            procs.append(subprocess.Popen(["sh", "-c", script], stderr=subprocess.PIPE, text=True))
        codes = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
        check(all(c == 0 for c, _ in codes), f"concurrent adds failed: {codes}")
        r = run(["sqlite3", conc, "SELECT count(*) FROM runs; SELECT count(*) FROM measurements"])
        check(r.stdout.split() == ["40", str(40 * rows)], f"concurrent adds kept {r.stdout.split()}")
        static_site(binary, tmp, conc, rows, chromium)

        # CI's first run: check --add on a history that does not exist yet creates it; without --add
        # a missing history is an error (a mistyped --db must not pass every check).
        first = os.path.join(tmp, "first.sqlite")
        r = run([binary, "history", "check", same, "--db", first])
        check(r.returncode == 2 and not os.path.exists(first), f"check of a missing history: {r.returncode}")
        r = run([binary, "history", "check", same, "--db", first, "--add"])
        check(r.returncode == 0 and r.stdout.count("NEW SERIES") == rows and os.path.exists(first),
              f"check --add of a first run: {r.returncode} {r.stdout} {r.stderr}")

        # Bad input: exit 2, the path in the message, the database unchanged.
        def refused(args, path, words, what):
            before = digest(db)
            dump_before = run(["sqlite3", db, ".dump"]).stdout
            r = run(args)
            check(r.returncode == 2 and words in r.stderr and path in r.stderr,
                  f"{what}: exit {r.returncode}, stderr {r.stderr}")
            check(digest(db) == before and run(["sqlite3", db, ".dump"]).stdout == dump_before,
                  f"{what}: the database changed")

        other = json.loads(json.dumps(template))
        other["schema"] = "convbench.results/2"
        bad = os.path.join(tmp, "other-schema.json")
        write(bad, other)
        good = os.path.join(tmp, "good.json")
        write(good, derived_run(template, 50, 1.0, rng))
        refused([binary, "history", "add", good, bad, "--db", db], bad, "not a convbench results file",
                "a results file of another schema")
        newer = os.path.join(tmp, "newer.sqlite")
        shutil.copy(db, newer)
        con = sqlite3.connect(newer)
        con.execute("PRAGMA user_version = 99")
        con.close()
        before = digest(newer)
        r = run([binary, "history", "add", good, "--db", newer])
        check(r.returncode == 2 and "newer convbench" in r.stderr and newer in r.stderr and digest(newer) == before,
              f"a newer database: {r.returncode} {r.stderr}")
        r = run([binary, "compare", spec, "--device", "cpu", "-q", "--db", newer])  # refused before measuring
        check(r.returncode == 2 and "newer convbench" in r.stderr and digest(newer) == before and not r.stdout,
              f"compare --db of a newer database: {r.returncode} {r.stderr}")
        r = run([binary, "history", "check", good, "--db", newer])
        check(r.returncode == 2 and "newer convbench" in r.stderr, f"check on a newer database: {r.stderr}")
        corrupt = os.path.join(tmp, "corrupt.sqlite")
        with open(corrupt, "wb") as f:
            f.write(b"SQLite format 3\0" + bytes(range(256)) * 16)
        before = digest(corrupt)
        r = run([binary, "history", "add", good, "--db", corrupt])
        check(r.returncode == 2 and corrupt in r.stderr and digest(corrupt) == before,
              f"a corrupt database: {r.returncode} {r.stderr}")
        # Locked: another process holds the write lock longer than the busy timeout allows.
        holder = sqlite3.connect(db, timeout=1)
        holder.execute("BEGIN IMMEDIATE")
        r = run([binary, "history", "add", good, "--db", db, "--busy-timeout", "0.3"])
        check(r.returncode == 2 and "locked" in r.stderr and db in r.stderr, f"a locked database: {r.stderr}")
        holder.rollback()
        holder.close()
        r = run(["sqlite3", db, "SELECT count(*) FROM runs"])
        check(r.stdout.strip() == "13", f"runs after the refused adds: {r.stdout}")
        # Read-only: a file the process may not write (as root, an immutable file, where allowed).
        ro = os.path.join(tmp, "ro.sqlite")
        shutil.copy(db, ro)
        protected = False
        if os.geteuid() == 0:
            protected = run(["chattr", "+i", ro]).returncode == 0
        else:
            os.chmod(ro, 0o444)
            protected = True
        if protected:
            before = digest(ro)
            r = run([binary, "history", "add", good, "--db", ro])
            check(r.returncode == 2 and ro in r.stderr and digest(ro) == before,
                  f"a read-only database: {r.returncode} {r.stderr}")
            r = run([binary, "history", "list", "--db", ro])
            check(r.returncode == 0, f"list of a read-only database: {r.stderr}")
            if os.geteuid() == 0:
                run(["chattr", "-i", ro])
        else:
            print("note: read-only case not run (root without chattr +i)")
        r = run([binary, "history", "list", "--db", os.path.join(tmp, "missing.sqlite")])
        check(r.returncode == 2 and "missing.sqlite" in r.stderr and not os.path.exists(
            os.path.join(tmp, "missing.sqlite")), f"a missing database: {r.stderr}")

    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("history end to end: ok")


if __name__ == "__main__":
    main()

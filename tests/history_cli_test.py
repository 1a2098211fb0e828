#!/usr/bin/env python3
"""`convbench history` end to end, as its users meet it, on either store: runs added from real
`compare` output and from files derived from it, the tables read with the store's own shell
(sqlite3, psql), `check` exit codes on an injected step, the export read by pandas, the trend page
and the static site rendered by Chromium, four processes adding at once losing nothing, and bad
input (another results schema; a newer, foreign, locked, read-only or missing database; on SQLite a
corrupt file) refused with exit 2 and the database left unchanged.

--store postgresql runs all of it against a real PostgreSQL server that scripts/test-postgres.sh
starts on loopback (and stops at the end); --part server runs, instead, what only a server has: a
role that may only read, passwords never shown, a server that stops answering, writers killed in
the middle of their transaction leaving nothing behind, and `check`, `list`, `export` and the site
saying the same of the same runs on both stores. Two tests, so that neither outgrows its budget.

usage: history_cli_test.py CONVBENCH SOURCE_DIR [--store sqlite|postgresql] [--part shared|server]
"""
import argparse
import copy
import hashlib
import signal
import time
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


class SqliteStore:
    """Histories as SQLite files in the test's folder, read with the sqlite3 shell."""
    name = "sqlite"
    tables = ["graph_facts", "measurements", "runs", "series", "trend"]

    def __init__(self, tmp):
        self.tmp = tmp

    def new(self, name):
        return os.path.join(self.tmp, name + ".sqlite")

    def exists(self, db):
        return os.path.exists(db)

    def sql(self, db, *queries):
        return run(["sqlite3", "-csv", db, ";".join(queries)]).stdout.split()

    def table_names(self, db):
        return run(["sqlite3", db, ".tables"]).stdout.split()

    def snapshot(self, db):
        return digest(db), run(["sqlite3", db, ".dump"]).stdout

    def copy(self, db, name):
        path = self.new(name)
        shutil.copy(db, path)
        return path

    def set_version(self, db, version):
        con = sqlite3.connect(db)
        con.execute(f"PRAGMA user_version = {version}")
        con.close()

    def foreign(self, name):
        path = self.new(name)
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t (x)")
        con.execute("PRAGMA application_id = 42")
        con.close()
        return path

    def hold_write_lock(self, db):
        holder = sqlite3.connect(db, timeout=1)
        holder.execute("BEGIN IMMEDIATE")
        return holder.rollback

    def close(self):
        pass


class PostgresStore:
    """Histories as databases of a throwaway server (scripts/test-postgres.sh), read with psql."""
    name = "postgresql"
    tables = ["convbench_history", "graph_facts", "measurements", "runs", "series", "trend"]
    lock_key = 0x63626831  # every convbench writer's advisory lock: 'cbh1', the history's application id

    def __init__(self, source):
        self.script = os.path.join(source, "scripts/test-postgres.sh")
        r = run([self.script, "start"])
        if r.returncode != 0:
            raise SystemExit(f"FAIL: scripts/test-postgres.sh start: {r.returncode} {r.stderr}")
        fields = dict(line.split("=", 1) for line in r.stdout.split())
        self.dir, self.admin = fields["dir"], fields["uri"]
        self.server = self.admin.rsplit("/", 1)[0]  # postgresql://convbench_admin@127.0.0.1:PORT
        self.port = self.server.rsplit(":", 1)[1]

    def psql(self, db, *queries):
        args = ["psql", "-X", "-q", "-A", "-t", "-F", ",", "-v", "ON_ERROR_STOP=1", db]
        for q in queries:
            args += ["-c", q]
        r = run(args)
        if r.returncode != 0:
            check(False, f"psql {queries}: {r.stderr}")
        return r

    def new(self, name):
        self.psql(self.admin, f"CREATE DATABASE {name}")
        return f"{self.server}/{name}"

    def exists(self, db):
        return self.psql(db, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").stdout.strip() != "0"

    def sql(self, db, *queries):
        return self.psql(db, *queries).stdout.split()

    def table_names(self, db):
        return self.sql(db, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                            "ORDER BY 1")

    def snapshot(self, db):
        r = run(["pg_dump", "--no-owner", db])
        check(r.returncode == 0, f"pg_dump {db}: {r.stderr}")
        # pg_dump fences its output with a random key (\restrict KEY): not the database's content.
        return [line for line in r.stdout.splitlines() if not line.startswith(("\\restrict", "\\unrestrict"))]

    def copy(self, db, name):
        self.psql(self.admin, f"CREATE DATABASE {name} TEMPLATE {db.rsplit('/', 1)[1]}")
        return f"{self.server}/{name}"

    def set_version(self, db, version):
        self.psql(db, f"UPDATE convbench_history SET schema_version = {version}")

    def foreign(self, name):
        db = self.new(name)
        self.psql(db, "CREATE TABLE t (x integer)")
        return db

    def hold_write_lock(self, db):
        holder = subprocess.Popen(["psql", "-X", "-q", db], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  text=True)
        holder.stdin.write(f"BEGIN; SELECT pg_advisory_xact_lock({self.lock_key});\n")
        holder.stdin.flush()
        for _ in range(500):  # until the server says the lock is held
            if self.sql(db, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") == ["1"]:
                break
            time.sleep(0.02)

        def release():
            holder.stdin.write("ROLLBACK;\n")
            holder.stdin.close()
            holder.wait(timeout=30)
        return release

    def close(self):
        run([self.script, "stop", self.dir])


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


def derived_runs(tmp, template, rng):
    """Twelve runs of the same build, then one 25% slower (the step) and one like the others."""
    files = []
    for i in range(12):
        files.append(os.path.join(tmp, f"run{i}.json"))
        write(files[-1], derived_run(template, i, 1.0, rng))
    slow, same = os.path.join(tmp, "slow.json"), os.path.join(tmp, "same.json")
    write(slow, derived_run(template, 20, 1.25, rng))
    write(same, derived_run(template, 21, 1.0, rng))
    return files, slow, same


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.exists(path) else None


def long_name_filters(binary, tmp, store, template, rng):
    """--filter over 30,000- and 1,000,000-character block names, on a 1 MiB stack (issue 37,
    item 5): std::regex recursed per character and overflowed from about 30,000; RE2 does not."""
    db = store.new("long")
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


def end_to_end(binary, source, tmp, store, rng):
    db = store.new("h")
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

    files, slow, same = derived_runs(tmp, template, rng)
    r = run([binary, "history", "add", *files, "--db", db])
    check(r.returncode == 0 and f"added 12 run(s), {12 * rows} measurement(s), 0 new series" in r.stdout,
          f"history add: {r.returncode} {r.stdout} {r.stderr}")
    r = run([binary, "history", "check", slow, "--db", db])
    check(r.returncode == 1 and "SLOWER" in r.stdout and "Mann-Whitney p=" in r.stdout,
          f"check of a 25% slower run: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = run([binary, "history", "check", same, "--db", db])
    check(r.returncode == 0 and "Result: no regression (exit code 0)" in r.stdout,
          f"check of a run like the others: exit {r.returncode}\n{r.stdout}{r.stderr}")

    # The store's own shell reads the documented tables.
    tables = store.table_names(db)
    check(tables == store.tables, f"{store.name} tables: {tables}")
    counts = store.sql(db, "SELECT count(*), count(DISTINCT series_id) FROM measurements",
                       "SELECT count(*) FROM runs", "SELECT count(*) FROM trend WHERE median_ms > 0")
    check(counts == [f"{13 * rows},{rows}", "13", str(13 * rows)], f"{store.name} counts: {counts}")

    r = run([binary, "history", "list", "--db", db])
    check(r.returncode == 0 and f"{rows} series, {13 * rows} measurements" in r.stdout, f"list: {r.stdout}")
    r = run([binary, "history", "show", "--db", db, "--filter", "separable", "--last", "5"])
    check(r.returncode == 0 and r.stdout.count(" / separable (") == 2 and "the last 5 shown" in r.stdout,
          f"show: {r.stdout}{r.stderr}")
    long_name_filters(binary, tmp, store, template, rng)

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

    # Four processes adding at once lose nothing.
    conc = store.new("concurrent")
    batches = [[], [], [], []]
    for i in range(40):
        f = os.path.join(tmp, f"c{i}.json")
        write(f, derived_run(template, 100 + i, 1.0, rng))
        batches[i % 4].append(f)
    procs = []
    for b in batches:  # one add per file, so the two processes interleave their transactions
        script = " && ".join(f"{binary} history add {f} --db '{conc}' >/dev/null" for f in b)
        procs.append(subprocess.Popen(["sh", "-c", script], stderr=subprocess.PIPE, text=True))
    codes = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    check(all(c == 0 for c, _ in codes), f"concurrent adds failed: {codes}")
    kept = store.sql(conc, "SELECT count(*) FROM runs", "SELECT count(*) FROM measurements")
    check(kept == ["40", str(40 * rows)], f"concurrent adds kept {kept}")
    static_site(binary, tmp, conc, rows, chromium)

    # CI's first run: check --add on a history that does not exist yet creates it; without --add
    # a missing history is an error (a mistyped --db must not pass every check).
    first = store.new("first")
    r = run([binary, "history", "check", same, "--db", first])
    check(r.returncode == 2 and not store.exists(first), f"check of a missing history: {r.returncode}")
    # Its rows are new series, judged against nothing: exit 4, not a silent pass, unless accepted.
    r = run([binary, "history", "check", same, "--db", first, "--add"])
    check(r.returncode == 4 and r.stdout.count("NEW SERIES") == rows and store.exists(first)
          and "Result: not judged (exit code 4)" in r.stdout,
          f"check --add of a first run: {r.returncode} {r.stdout} {r.stderr}")
    seeded = store.new("seeded")
    r = run([binary, "history", "check", same, "--db", seeded, "--add", "--accept-unjudged"])
    check(r.returncode == 0 and "accepted by --accept-unjudged" in r.stdout and store.exists(seeded),
          f"check --add --accept-unjudged of a first run: {r.returncode} {r.stdout} {r.stderr}")

    # Bad input: exit 2, the path in the message, the database unchanged.
    def refused(args, path, words, what, target=db):
        before = store.snapshot(target)
        r = run(args)
        check(r.returncode == 2 and words in r.stderr and path in r.stderr,
              f"{what}: exit {r.returncode}, stderr {r.stderr}")
        check(store.snapshot(target) == before, f"{what}: the database changed")
        return r

    other = json.loads(json.dumps(template))
    other["schema"] = "convbench.results/2"
    bad = os.path.join(tmp, "other-schema.json")
    write(bad, other)
    good = os.path.join(tmp, "good.json")
    write(good, derived_run(template, 50, 1.0, rng))
    refused([binary, "history", "add", good, bad, "--db", db], bad, "not a convbench results file",
            "a results file of another schema")
    newer = store.copy(db, "newer")
    store.set_version(newer, 99)
    refused([binary, "history", "add", good, "--db", newer], newer, "newer convbench", "a newer database", newer)
    r = refused([binary, "compare", spec, "--device", "cpu", "-q", "--db", newer], newer, "newer convbench",
                "compare --db of a newer database", newer)  # refused before measuring
    check(not r.stdout, f"compare --db of a newer database printed {r.stdout}")
    refused([binary, "history", "check", good, "--db", newer], newer, "newer convbench",
            "check on a newer database", newer)
    # A negative version (a damaged or forged header; SQLite's user_version is any 32-bit
    # integer): refused as damaged by writers and readers alike, never used as a migration's index.
    for version in (-1, -5, -2**31):
        damaged = store.copy(db, f"negative{-version}")
        store.set_version(damaged, version)
        for args in (["history", "add", good], ["history", "list"], ["history", "check", good, "--add"]):
            r = refused([binary, *args, "--db", damaged], damaged, f"its schema version is {version}",
                        f"{args[1]} of a history at schema version {version}", damaged)
            check(-r.returncode not in (signal.SIGSEGV, signal.SIGBUS) and "(in:" not in r.stderr,
                  f"{args[1]} at schema version {version}: {r.returncode} {r.stderr}")
    # An older schema: readers ask for an add, which migrates it (here: version 1, before the
    # trend view and the graph facts), on either store.
    older = store.copy(db, "older")
    store.sql(older, "DROP VIEW trend", "DROP TABLE graph_facts")
    store.set_version(older, 1)
    r = run([binary, "history", "list", "--db", older])
    check(r.returncode == 2 and "older than this convbench's" in r.stderr, f"list of an older schema: {r.stderr}")
    # Version 2 (before the graph facts) is read as it is: readers take the facts as absent.
    two = store.copy(db, "version2")
    store.sql(two, "DROP TABLE graph_facts")
    store.set_version(two, 2)
    r = run([binary, "history", "list", "--db", two])
    check(r.returncode == 0 and f"{rows} series" in r.stdout, f"list of a version 2 history: {r.stdout}{r.stderr}")
    r = run([binary, "history", "check", same, "--db", two])
    check(r.returncode in (0, 4) and "Result:" in r.stdout, f"check against a version 2 history: {r.stdout}{r.stderr}")
    r = run([binary, "history", "add", good, "--db", older])
    counts = store.sql(older, "SELECT count(*) FROM trend", "SELECT count(*) FROM runs")
    check(r.returncode == 0 and counts == [str(14 * rows), "14"], f"add to an older schema: {counts} {r.stderr}")
    foreign = store.foreign("other_app")
    refused([binary, "history", "add", good, "--db", foreign], foreign, "not a convbench history",
            "another application's database", foreign)
    if store.name == "sqlite":
        corrupt = os.path.join(tmp, "corrupt.sqlite")
        with open(corrupt, "wb") as f:
            f.write(b"SQLite format 3\0" + bytes(range(256)) * 16)
        before = digest(corrupt)
        r = run([binary, "history", "add", good, "--db", corrupt])
        check(r.returncode == 2 and corrupt in r.stderr and digest(corrupt) == before,
              f"a corrupt database: {r.returncode} {r.stderr}")
    # Locked: another process holds the write lock longer than the busy timeout allows.
    release = store.hold_write_lock(db)
    r = run([binary, "history", "add", good, "--db", db, "--busy-timeout", "0.3"])
    check(r.returncode == 2 and "locked" in r.stderr and db in r.stderr, f"a locked database: {r.stderr}")
    release()
    kept = store.sql(db, "SELECT count(*) FROM runs")
    check(kept == ["13"], f"runs after the refused adds: {kept}")
    if store.name == "sqlite":
        read_only_file(binary, tmp, db, good)
    missing = store.server + "/missing" if store.name == "postgresql" else os.path.join(tmp, "missing.sqlite")
    r = run([binary, "history", "list", "--db", missing])
    check(r.returncode == 2 and "missing" in r.stderr and not os.path.exists(os.path.join(tmp, "missing.sqlite")),
          f"a missing database: {r.stderr}")


def read_only_file(binary, tmp, db, good):
    """A file the process may not write (as root, an immutable file, where allowed): add refused,
    list reads it."""
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


def postgres_only(binary, tmp, store, db, good, template, rng):
    """What only a server has: roles that may read but not write, passwords, writers killed with
    their transaction open, and the same answers as SQLite's for the same runs."""
    rows = len(template["results"])
    # A role that may only read: list works, add is refused and changes nothing.
    name = db.rsplit("/", 1)[1]
    store.psql(db, "CREATE ROLE reader LOGIN", f"GRANT CONNECT ON DATABASE {name} TO reader",
               "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    as_reader = db.replace("convbench_admin@", "reader@")
    r = run([binary, "history", "list", "--db", as_reader])
    check(r.returncode == 0 and f"{rows} series" in r.stdout, f"list as a read-only role: {r.stdout} {r.stderr}")
    before = store.snapshot(db)
    r = run([binary, "history", "add", good, "--db", as_reader])
    check(r.returncode == 2 and "permission denied" in r.stderr and "reader@" in r.stderr,
          f"add as a read-only role: {r.returncode} {r.stderr}")
    check(store.snapshot(db) == before, "add as a read-only role changed the database")
    # A wrong password: refused, and the password is not shown.
    store.psql(store.admin, "CREATE ROLE convbench_locked LOGIN PASSWORD 'right-one'")
    wrong = f"postgresql://convbench_locked:s3cret-typo@127.0.0.1:{store.port}/{name}"
    r = run([binary, "history", "list", "--db", wrong])
    check(r.returncode == 2 and "password authentication failed" in r.stderr and "s3cret-typo" not in r.stderr
          and "convbench_locked:***@" in r.stderr, f"a wrong password: {r.returncode} {r.stderr}")
    r = run([binary, "history", "list", "--db", wrong.replace("s3cret-typo", "right-one")])
    check(r.returncode == 2 and "permission denied" in r.stderr and "right-one" not in r.stderr,
          f"the right password, no privilege: {r.returncode} {r.stderr}")
    # The right password on a database the role owns: the history is made, the password not printed.
    store.psql(store.admin, "CREATE DATABASE owned OWNER convbench_locked")
    owned = f"postgresql://convbench_locked:right-one@127.0.0.1:{store.port}/owned"
    r = run([binary, "history", "add", good, "--db", owned])
    check(r.returncode == 0 and "convbench_locked:***@" in r.stdout and "right-one" not in r.stdout + r.stderr,
          f"add with a password: {r.returncode} {r.stdout} {r.stderr}")
    r = run([binary, "history", "check", good, "--db", owned, "--add", "--accept-unjudged"])
    check(r.returncode == 0 and "right-one" not in r.stdout + r.stderr and "***" in r.stderr,
          f"check --add with a password: {r.returncode} {r.stdout} {r.stderr}")

    # The password under a key spelled with percent escapes: libpq decodes the key and logs in with
    # it, so it is hidden wherever the name is shown (messages, list, the site, the report).
    for key in ("%70assword", "pass%77ord"):
        spelled = f"postgresql://convbench_locked@127.0.0.1:{store.port}/owned?{key}=right-one"
        r = run([binary, "history", "add", good, "--db", spelled])
        check(r.returncode == 0 and "right-one" not in r.stdout + r.stderr and f"{key}=***" in r.stdout,
              f"add with {key}: {r.returncode} {r.stdout} {r.stderr}")
        r = run([binary, "history", "list", "--db", spelled])
        check(r.returncode == 0 and "right-one" not in r.stdout + r.stderr, f"list with {key}: {r.stdout}")
        wrong_key = spelled.replace("right-one", "s3cret-typo")
        r = run([binary, "history", "list", "--db", wrong_key])
        check(r.returncode == 2 and "password authentication failed" in r.stderr and "s3cret-typo" not in r.stderr,
              f"a wrong password under {key}: {r.returncode} {r.stderr}")
        pages = os.path.join(tmp, "site-" + key.replace("%", ""))
        r = run([binary, "history", "site", pages, "--db", spelled])
        check(r.returncode == 0, f"site with {key}: {r.stderr}")
        page = os.path.join(tmp, "report-" + key.replace("%", "") + ".html")
        r = run([binary, "history", "report", "--db", spelled, "--html", page])
        check(r.returncode == 0, f"report with {key}: {r.stderr}")
        texts = [open(os.path.join(pages, p), encoding="utf-8").read() for p in os.listdir(pages)]
        texts.append(open(page, encoding="utf-8").read())
        check(all("right-one" not in t for t in texts), f"the site or the report with {key} shows the password")

    # A server that stops answering in the middle of an add (its process stopped, while the host
    # still acknowledges the connection, so no keepalive notices): the add gives up once the
    # session's statement_timeout and the margin have passed (exit 2, saying so), and leaves
    # nothing behind; the stopped backend, continued, rolls the transaction back.
    stalled = store.new("stalled")
    r = run([binary, "history", "add", good, "--db", stalled])
    check(r.returncode == 0, f"first add to the stalled history: {r.stderr}")
    stall_files = []
    for i in range(150):
        stall_files.append(os.path.join(tmp, f"s{i}.json"))
        write(stall_files[-1], derived_run(template, 700 + i, 1.0, rng))
    short = stalled + "?options=-c%20statement_timeout%3D2000"  # 2 s, through libpq's own option
    writer = subprocess.Popen([binary, "history", "add", *stall_files, "--db", short],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    backend = None
    for _ in range(4000):  # until its transaction has written a run
        pids = store.sql(stalled, "SELECT pid FROM pg_stat_activity WHERE application_name = 'convbench' "
                                  "AND datname = current_database() AND xact_start IS NOT NULL "
                                  "AND backend_xid IS NOT NULL")
        if pids and pids[0]:
            backend = int(pids[0])
            os.kill(backend, signal.SIGSTOP)
            break
        if writer.poll() is not None:
            break
        time.sleep(0.005)
    if backend is None:
        writer.wait(timeout=600)
        print("note: the stalled-server case did not run (the add finished before its backend could be stopped)")
    else:
        started = time.monotonic()
        try:
            code = writer.wait(timeout=120)
            err = writer.stderr.read()
        finally:
            os.kill(backend, signal.SIGCONT)
        waited = time.monotonic() - started
        check(code == 2 and "did not answer within 12 s" in err and "stalled" in err,
              f"an add whose server stopped answering: exit {code} after {waited:.0f} s: {err}")
        for _ in range(500):  # until the continued backend has noticed its client left
            if store.sql(stalled, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'convbench'") == ["0"]:
                break
            time.sleep(0.02)
        kept = store.sql(stalled, "SELECT count(*) FROM runs")
        check(kept == ["1"], f"runs after the stalled add: {kept}")

    # Writers killed in the middle of their transaction: the server rolls each back, whole.
    killed = store.new("killed")
    files = []
    for i in range(150):
        files.append(os.path.join(tmp, f"k{i}.json"))
        write(files[-1], derived_run(template, 300 + i, 1.0, rng))
    r = run([binary, "history", "add", files[0], "--db", killed])
    check(r.returncode == 0, f"first add: {r.stderr}")
    kills = 0
    for attempt in range(3):
        writer = subprocess.Popen([binary, "history", "add", *files[1:], "--db", killed],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        inside = False
        for _ in range(2000):  # until its transaction has written a run
            busy = store.sql(killed, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'convbench' "
                                     "AND xact_start IS NOT NULL AND backend_xid IS NOT NULL")
            if busy == ["1"]:
                inside = True
                break
            if writer.poll() is not None:
                break
            time.sleep(0.005)
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        kills += inside
        for _ in range(500):  # until the server has noticed and rolled back
            if store.sql(killed, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'convbench'") == ["0"]:
                break
            time.sleep(0.02)
        kept = store.sql(killed, "SELECT count(*) FROM runs", "SELECT count(*) FROM measurements",
                         "SELECT count(*) FROM series")
        check(kept == ["1", str(rows), str(rows)], f"after a writer was killed mid-transaction: {kept}")
    check(kills >= 1, "no writer was caught inside its transaction: the kill case did not run")
    r = run([binary, "history", "add", *files[1:], "--db", killed])
    kept = store.sql(killed, "SELECT count(*) FROM runs", "SELECT count(*) FROM measurements")
    check(r.returncode == 0 and kept == ["150", str(150 * rows)], f"the add after the kills: {kept} {r.stderr}")

    # The same runs on both stores: the same listing, export and verdicts.
    lite, server = os.path.join(tmp, "same-runs.sqlite"), store.new("same_runs")
    same_runs = [os.path.join(tmp, f"run{i}.json") for i in range(12)]
    for target in (lite, server):
        r = run([binary, "history", "add", *same_runs, "--db", target])
        check(r.returncode == 0, f"add to {target}: {r.stderr}")
    for args in (["list"], ["show", "--last", "5"], ["export"], ["check", os.path.join(tmp, "slow.json")],
                 ["check", os.path.join(tmp, "same.json")]):
        a = run([binary, "history", *args, "--db", lite])
        b = run([binary, "history", *args, "--db", server])
        check(a.returncode == b.returncode and a.stdout.replace(lite, "DB") == b.stdout.replace(server, "DB"),
              f"history {' '.join(args)}: SQLite and PostgreSQL differ (exit {a.returncode} vs {b.returncode})\n"
              f"{a.stdout[:600]}\n---\n{b.stdout[:600]}")
    # The static site too, page by page (each names its history).
    sites = []
    for target in (lite, server):
        folder = os.path.join(tmp, "site-" + ("sqlite" if target == lite else "postgresql"))
        r = run([binary, "history", "site", folder, "--db", target])
        check(r.returncode == 0, f"site of {target}: {r.stderr}")
        pages = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        sites.append({p: open(os.path.join(folder, p), encoding="utf-8").read().replace(target, "DB") for p in pages})
    check(sites[0] == sites[1] and len(sites[0]) > rows,
          f"the sites of the same runs differ between SQLite and PostgreSQL: "
          f"{sorted(p for p in sites[0] if sites[0].get(p) != sites[1].get(p))}")


def server_only(binary, source, tmp, store, rng):
    """The server's own cases on a history of the committed results file's runs (no measuring:
    the shared cases, run by the other part, measure the real run)."""
    template = json.load(open(os.path.join(source, "tests/data/results/measured.json")))
    db = store.new("h")
    files, _, _ = derived_runs(tmp, template, rng)
    r = run([binary, "history", "add", *files, "--db", db])
    check(r.returncode == 0, f"history add: {r.returncode} {r.stdout} {r.stderr}")
    good = os.path.join(tmp, "good.json")
    write(good, derived_run(template, 50, 1.0, rng))
    postgres_only(binary, tmp, store, db, good, template, rng)


def main():
    parser = argparse.ArgumentParser(description="convbench history end to end on one store")
    parser.add_argument("binary")
    parser.add_argument("source")
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    # The PostgreSQL run is two tests, so that neither outgrows its tier's budget: the cases both
    # stores share, and those only a server has (roles, passwords, stalls, killed writers).
    parser.add_argument("--part", choices=["shared", "server"], default="shared")
    args = parser.parse_args()
    binary, source, store_name = args.binary, args.source, args.store
    if args.part == "server" and store_name != "postgresql":
        parser.error("--part server needs --store postgresql")
    rng = random.Random(17)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.environ.get("HISTORY_TEST_KEEP", tmp)
        store = PostgresStore(source) if store_name == "postgresql" else SqliteStore(tmp)
        try:
            if args.part == "server":
                server_only(binary, source, tmp, store, rng)
            else:
                end_to_end(binary, source, tmp, store, rng)
        finally:
            store.close()

    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print(f"history end to end ({store_name}, {args.part} cases): ok")


if __name__ == "__main__":
    main()

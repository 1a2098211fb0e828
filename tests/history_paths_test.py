#!/usr/bin/env python3
"""The history against the ways a file name can destroy or hang it, end to end: an output named
as the history (directly, through ./ or an absolute path, a symbolic link, an SQLite `file:` URI,
$CONVBENCH_DB), a FIFO, a device, a dangling link, a damaged page, read-only media, and four
processes creating one new history at once. Each refusal exits 2 before anything is measured,
names the history, and leaves it byte for byte as it was.

usage: history_paths_test.py CONVBENCH SOURCE_DIR
"""
import copy
import hashlib
import json
import os
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


def run(args, timeout=60, **kw):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, "timeout", "", f"timed out after {timeout} s")


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.exists(path) else None


def run_file(template, index, folder):
    """The measured results file as another commit's run (a distinct run for the history)."""
    doc = copy.deepcopy(template)
    doc["provenance"]["git_commit"] = "%012x" % (0xdef000 + index)
    doc["provenance"]["date"] = "2026-10-%02dT08:00:00Z" % (1 + index % 28)
    path = os.path.join(folder, f"run{index}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def damage_a_middle_page(path):
    """Overwrites one b-tree page in the middle of the file (not the header page) with noise."""
    con = sqlite3.connect(path)
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    con.close()
    with open(path, "r+b") as f:
        f.seek(page_size * (pages // 2))
        f.write(bytes((i * 97 + 13) % 256 for i in range(page_size)))


def main():
    binary, source = sys.argv[1], sys.argv[2]
    spec = os.path.join(source, "tests/data/results/readme-spec.yaml")
    template = json.load(open(os.path.join(source, "tests/data/results/measured.json")))
    with tempfile.TemporaryDirectory() as tmp:
        runs = [run_file(template, i, tmp) for i in range(24)]
        db = os.path.join(tmp, "h.sqlite")
        r = run([binary, "history", "add", *runs[:20], "--db", db])
        check(r.returncode == 0, f"history add: {r.returncode} {r.stderr}")
        before = digest(db)

        def refused(args, words, what, env=None, cwd=tmp, path=db):
            r = run(args, env=env, cwd=cwd, timeout=20)
            check(r.returncode == 2 and words in r.stderr, f"{what}: exit {r.returncode}, stderr {r.stderr!r}")
            check(digest(path) == before if path == db else True, f"{what}: the history changed")
            return r

        # 1. An output onto the history, however it is spelled: refused before measuring.
        link = os.path.join(tmp, "link.sqlite")
        os.symlink("h.sqlite", link)
        for out, db_name in (("h.sqlite", "h.sqlite"), ("./h.sqlite", db), (db, "./h.sqlite"), (db, link)):
            for flag in ("--json", "--csv", "--html"):
                refused([binary, "compare", spec, "--device", "cpu", flag, out, "--db", db_name],
                        "is also an input of this command", f"compare {flag} {out} --db {db_name}")
        uri_forms = ["file:h.sqlite", "file:" + db, "file://localhost" + db, "file:h%2Esqlite?mode=ro",
                     "file:./h.sqlite#x"]
        for uri in uri_forms:
            refused([binary, "history", "export", "--db", uri, "-o", "h.sqlite"], "is also an input",
                    f"history export --db {uri} -o h.sqlite")
            refused([binary, "compare", spec, "--device", "cpu", "--json", db, "--db", uri],
                    "is also an input", f"compare --json h.sqlite --db {uri}")
        refused([binary, "history", "report", "--db", "file:h.sqlite", "--html", "./h.sqlite"], "is also an input",
                "history report --html onto the history")
        refused([binary, "history", "export", "-o", db], "is also an input", "export onto $CONVBENCH_DB",
                env=dict(os.environ, CONVBENCH_DB="file:h.sqlite"))
        # ... while a URI is a history like any other name.
        r = run([binary, "history", "export", "--db", "file:h.sqlite?mode=ro", "-o", "out.csv"], cwd=tmp)
        rows = len(template["results"])
        check(r.returncode == 0 and open(os.path.join(tmp, "out.csv")).read().count("\n") == 1 + 20 * rows,
              f"export of a file: URI: {r.returncode} {r.stderr}")
        refused([binary, "history", "list", "--db", ":memory:"], "names no file", "an in-memory history")
        refused([binary, "history", "list", "--db", "file:x?mode=memory"], "mode=memory", "mode=memory")
        refused([binary, "history", "list", "--db", "file://elsewhere/h.sqlite"], "names the host",
                "a remote URI")

        # 2. Names SQLite would block on or create through: refused at once, nothing created.
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        for args in (["history", "list"], ["history", "show"], ["history", "export", "-o", "x.csv"],
                     ["history", "add", runs[0]], ["history", "check", runs[0]], ["history", "integrity"],
                     ["compare", spec, "--device", "cpu"]):
            refused([binary, *args, "--db", fifo], "is a FIFO", f"{' '.join(args[:2])} --db FIFO", path=fifo)
        refused([binary, "history", "list"], "is a FIFO", "$CONVBENCH_DB a FIFO",
                env=dict(os.environ, CONVBENCH_DB=fifo), path=fifo)
        dangling = os.path.join(tmp, "dangling.sqlite")
        os.symlink("nowhere.sqlite", dangling)
        for args in (["history", "add", runs[0]], ["compare", spec, "--device", "cpu"],
                     ["history", "check", runs[0], "--add"]):
            refused([binary, *args, "--db", dangling], "symbolic link to nowhere.sqlite", "a dangling link",
                    path=dangling)
        check(not os.path.exists(os.path.join(tmp, "nowhere.sqlite")), "a history was created through a link")
        device = os.path.join(tmp, "null")
        if os.geteuid() == 0 and run(["mknod", device, "c", "1", "3"]).returncode == 0:
            refused([binary, "history", "add", runs[0], "--db", device], "is a character device", "a device",
                    path=device)
            check(not os.path.exists(device + "-journal") and not os.path.exists(device + "-wal"),
                  "a journal was left beside a device")
        else:
            print("note: the device case was not run (mknod needs root)")
        refused([binary, "history", "list", "--db", tmp], "is a directory", "a directory", path=tmp)

        # 3. A damaged page: refused by every reader and writer, listed by `history integrity`.
        damaged = os.path.join(tmp, "damaged.sqlite")
        shutil.copy(db, damaged)
        damage_a_middle_page(damaged)
        hurt = digest(damaged)
        for args in (["history", "list"], ["history", "show"], ["history", "export"], ["history", "check", runs[21]],
                     ["history", "add", runs[21]], ["compare", spec, "--device", "cpu"]):
            r = run([binary, *args, "--db", damaged], timeout=20)
            check(r.returncode == 2 and ("damaged" in r.stderr or "malformed" in r.stderr) and damaged in r.stderr
                  and not r.stdout.strip() and digest(damaged) == hurt,
                  f"{' '.join(args[:2])} of a damaged history: exit {r.returncode} {r.stdout[:200]!r} {r.stderr!r}")
        r = run([binary, "history", "integrity", "--db", damaged])
        check(r.returncode == 1 and "damaged:" in r.stdout and digest(damaged) == hurt,
              f"integrity of a damaged history: {r.returncode} {r.stdout} {r.stderr}")
        r = run([binary, "history", "integrity", "--db", db])
        check(r.returncode == 0 and f"intact (20 run(s), {rows} series, {20 * rows} measurement(s))" in r.stdout,
              f"integrity of an intact history: {r.returncode} {r.stdout} {r.stderr}")

        tampered = os.path.join(tmp, "tampered.sqlite")
        shutil.copy(db, tampered)
        con = sqlite3.connect(tampered)
        con.execute("UPDATE series SET key_json = '{\"block\": 7' WHERE id = 1")
        con.commit()
        con.close()
        r = run([binary, "history", "list", "--db", tampered])
        check(r.returncode == 2 and "series #1: key_json is not a series key" in r.stderr and tampered in r.stderr,
              f"a tampered key_json: {r.returncode} {r.stderr}")

        # 4. Read-only media: readable; a write-ahead log it cannot apply is refused, not ignored.
        if os.geteuid() == 0 and run(["unshare", "-m", "true"]).returncode == 0:
            media = os.path.join(tmp, "media")
            os.mkdir(media)
            pending = os.path.join(tmp, "pending")
            os.mkdir(pending)
            shutil.copy(db, os.path.join(pending, "h.sqlite"))
            con = sqlite3.connect(os.path.join(pending, "h.sqlite"))
            con.execute("PRAGMA wal_autocheckpoint=0")
            con.execute("UPDATE runs SET source = 'changed' WHERE id = 1")
            con.commit()
            shutil.copy(os.path.join(pending, "h.sqlite"), os.path.join(pending, "p.sqlite"))
            shutil.copy(os.path.join(pending, "h.sqlite-wal"), os.path.join(pending, "p.sqlite-wal"))
            con.close()
            script = f"""
              mount -t tmpfs tmpfs {media} || exit 77
              cp {db} {media}/h.sqlite && cp {pending}/p.sqlite {pending}/p.sqlite-wal {media}/ || exit 1
              mount -o remount,ro {media} || exit 77
              {binary} history list --db {media}/h.sqlite || exit 10
              {binary} history export --db {media}/h.sqlite -o {tmp}/ro.csv || exit 11
              {binary} history integrity --db {media}/h.sqlite || exit 12
              {binary} history add {runs[22]} --db {media}/h.sqlite 2>{tmp}/ro-add.err; [ $? = 2 ] || exit 13
              {binary} history list --db {media}/p.sqlite 2>{tmp}/ro-wal.err; [ $? = 2 ] || exit 14
            """
            r = run(["unshare", "-m", "sh", "-c", script])
            if r.returncode == 77:
                print("note: the read-only media case was not run (no tmpfs mount here)")
            else:
                check(r.returncode == 0 and f"{rows} series, {20 * rows} measurements" in r.stdout and
                      "intact (20 run(s)" in r.stdout,
                      f"a history on read-only media: exit {r.returncode} {r.stdout[-400:]} {r.stderr}")
                check(os.path.exists(os.path.join(tmp, "ro.csv")) and
                      open(os.path.join(tmp, "ro.csv")).read().count("\n") == 1 + 20 * rows, "export from read-only")
                err = open(os.path.join(tmp, "ro-wal.err")).read() if os.path.exists(
                    os.path.join(tmp, "ro-wal.err")) else ""
                check("write-ahead log" in err, f"a read-only history with a pending log: {err!r}")
        else:
            print("note: the read-only media case was not run (needs root and unshare -m)")

        # 5. Four processes creating one new history at once: every run lands, 15 rounds.
        for round_ in range(15):
            new = os.path.join(tmp, f"new{round_}.sqlite")
            procs = [subprocess.Popen([binary, "history", "add", runs[20 + i], "--db", new],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in range(4)]
            codes = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
            check(all(c == 0 for c, _ in codes), f"round {round_}: a first add failed: {codes}")
            con = sqlite3.connect(new)
            n = con.execute("SELECT count(*) FROM runs").fetchone()[0]
            con.close()
            check(n == 4, f"round {round_}: {n} runs of 4 in the new history")
            if failures:
                break

    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("history paths: ok")


if __name__ == "__main__":
    main()

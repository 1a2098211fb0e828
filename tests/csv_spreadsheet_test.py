#!/usr/bin/env python3
"""The CSV opened in a real spreadsheet (issue 37, item 11): block and variant names an attacker
would write (formulas, a tab or CR first, a right-to-left override) go through convbench's own
`compare --csv` and `history export`, LibreOffice Calc imports each file (headless, converting it
to .xlsx) and openpyxl reads the cells it made. No cell may be a formula, each hostile name must
show as text its user recognises (with the leading ' convbench adds), and the counts and times
must still be numbers.

LibreOffice imports with the defaults `soffice --convert-to` gives a .csv (no --infilter: the
"Text - txt - csv (StarCalc)" filter, comma-separated, UTF-8), which runs a cell that starts with
= as a formula, as a user's import with "Evaluate formulas" does. A control file of raw formulas
is converted in the same run and must come out as formulas: otherwise the import would prove
nothing, and the test fails saying so.

usage: csv_spreadsheet_test.py CONVBENCH
Prints "SKIP: ..." and exits 0 without soffice (libreoffice-calc-nogui) or openpyxl
(python3-openpyxl): scripts/setup.sh --tests installs both.
"""
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import openpyxl
except ImportError:
    print("SKIP: openpyxl not importable (python3-openpyxl; scripts/setup.sh --tests installs it)")
    sys.exit(0)

# The names, and how each must show in its cell: convbench's printable form (controls escaped as
# \t, \r, \u202e) after the leading ' that keeps a spreadsheet from running it. LibreOffice keeps
# that ' as part of the text on a CSV import, so the cell reads '=HYPERLINK(...), as in pandas.
HOSTILE = {
    '=HYPERLINK("http://example.invalid/?x","y")': '\'=HYPERLINK("http://example.invalid/?x","y")',
    "+1+1": "'+1+1",
    "-2+3": "'-2+3",
    "@SUM(1)": "'@SUM(1)",
    "\tcmd": "\\tcmd",
    "\r=1+1": "\\r=1+1",
    "evil\u202etxt.exe": "evil\\u202etxt.exe",
}


def yaml_string(text):
    """A YAML double-quoted scalar of `text` (JSON's escapes are YAML's)."""
    out = '"'
    for c in text:
        if c in '"\\':
            out += "\\" + c
        elif ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or ord(c) == 0x202e:
            out += "\\u%04x" % ord(c)
        else:
            out += c
    return out + '"'


def spec_text():
    """Two blocks: each hostile name as a block or as a variant, every variant a cheap kind."""
    blocks = [("=HYPERLINK(\"http://example.invalid/?x\",\"y\")", ["+1+1", "-2+3", "@SUM(1)"]),
              ("\tcmd", ["\r=1+1", "evil\u202etxt.exe"])]
    kinds = ["{kind: separable, name: %s}", "{kind: bottleneck, ratio: 2, name: %s}", "{kind: grouped, groups: 2, name: %s}"]
    text = "blocks:\n"
    for block, variants in blocks:
        text += f"  - name: {yaml_string(block)}\n    batch: 1\n    in_channels: 4\n    out_channels: 4\n"
        text += "    size: [4, 4]\n    variants:\n      - standard\n"
        for kind, name in zip(kinds, variants):
            text += "      - " + kind % yaml_string(name) + "\n"
    return text


def convert(soffice, files, outdir, profile):
    """LibreOffice's import of each CSV, saved as .xlsx in outdir: one start for every file."""
    cmd = [soffice, f"-env:UserInstallation=file://{profile}", "--headless", "--norestore", "--convert-to", "xlsx",
           "--outdir", outdir, *files]
    # HOME too: LibreOffice run as root still looks there for its settings.
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": profile})
    made = {os.path.basename(f): os.path.join(outdir, os.path.splitext(os.path.basename(f))[0] + ".xlsx")
            for f in files}
    missing = [name for name, xlsx in made.items() if not os.path.exists(xlsx)]
    if r.returncode != 0 or missing:
        sys.exit(f"FAIL: soffice --convert-to xlsx exited {r.returncode}, did not convert {missing}: "
                 f"{(r.stdout + r.stderr)[-500:]}")
    return made


def sheet_rows(xlsx):
    return [list(row) for row in openpyxl.load_workbook(xlsx).active.iter_rows()]


def check(xlsx, what, name_columns, number_columns, failures):
    rows = sheet_rows(xlsx)
    header = [c.value for c in rows[0]]
    formulas = [f"{c.coordinate}={c.value!r}" for row in rows for c in row if c.data_type == "f"]
    if formulas:
        failures.append(f"{what}: LibreOffice made formulas of {formulas[:5]}")
    links = [c.coordinate for row in rows for c in row if c.hyperlink is not None]
    if links:
        failures.append(f"{what}: cells with hyperlinks: {links[:5]}")
    shown = set()
    for column in name_columns:
        k = header.index(column)
        for row in rows[1:]:
            cell = row[k]
            if cell.data_type != "s":
                failures.append(f"{what}: {column} {cell.coordinate} is {cell.value!r} ({cell.data_type}), not text")
            shown.add(cell.value)
    missing = sorted(set(HOSTILE.values()) - shown)
    if missing:
        failures.append(f"{what}: names not shown as text a user recognises: {missing}; the cells hold {sorted(shown, key=str)}")
    for column in number_columns:
        k = header.index(column)
        cells = [row[k] for row in rows[1:]]
        bad = [f"{c.coordinate}={c.value!r}" for c in cells if c.data_type != "n" or not isinstance(c.value, (int, float))]
        if bad or not cells:
            failures.append(f"{what}: {column} is not numbers: {bad[:5]}")
    print(f"{what}: {len(rows) - 1} rows, {len(formulas)} formulas; names {sorted(shown, key=str)}")


def main():
    binary = sys.argv[1]
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice:
        print("SKIP: no soffice (libreoffice-calc-nogui; scripts/setup.sh --tests installs it)")
        return 0
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        spec, csv, db = (os.path.join(tmp, n) for n in ("hostile.yaml", "compare.csv", "h.sqlite"))
        with open(spec, "w", encoding="utf-8") as f:
            f.write(spec_text())
        r = subprocess.run([binary, "compare", spec, "--device", "reference", "--min-time", "0", "--min-samples", "2",
                            "--timeout", "1", "-q", "--csv", csv, "--db", db], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: compare --csv --db: exit {r.returncode}: {r.stderr[-500:]}")
            return 1
        export = os.path.join(tmp, "export.csv")
        r = subprocess.run([binary, "history", "export", "--db", db], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: history export: exit {r.returncode}: {r.stderr[-500:]}")
            return 1
        with open(export, "w", encoding="utf-8") as f:
            f.write(r.stdout)
        # The control: what the same import makes of formulas nobody neutralised.
        control = os.path.join(tmp, "control.csv")
        with open(control, "w", encoding="utf-8") as f:
            f.write('name,n\n=1+2,3\n"=HYPERLINK(""http://example.invalid/"",""y"")",4\n')
        made = convert(soffice, [csv, export, control], os.path.join(tmp, "out"), os.path.join(tmp, "profile"))

        control_types = [c.data_type for row in sheet_rows(made["control.csv"])[1:] for c in row[:1]]
        if control_types != ["f", "f"]:
            failures.append(f"the control's raw formulas imported as {control_types}, not formulas: this import "
                            "runs no formula, so it cannot show that convbench's CSV is safe")
        check(made["compare.csv"], "compare --csv", ["block", "variant"],
              ["params", "buffers", "macs_forward", "step_median_ms", "batch"], failures)
        check(made["export.csv"], "history export", ["block", "variant"], ["series_id", "median_ms", "samples"],
              failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`--plots DIR` checked with the tools a paper's reader uses (issue 15, item 5): each standalone
SVG renders in Chromium (headless) with its axes, and its PDF (rsvg-convert) rasterised by
pdftoppm shows the same axes; with eight variants, no two point labels overlap. A bad DIR exits 2.

The axis lines sit at fixed places of the 680 x 420 canvas (report/svg_plot.cpp: left margin
80, plot 316 high from y = 40): the test reads those pixels.

usage: figures_test.py CONVBENCH SOURCE_DIR
"""
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    width, height = int(m.group(1)), int(m.group(2))
    pixels = data[m.end():]
    return width, height, [[tuple(pixels[(y * width + x) * 3:(y * width + x) * 3 + 3]) for x in range(width)]
                           for y in range(height)]


def dark(pixel):
    return sum(pixel) / 3 < 200  # the axis (#333, anti-aliased over two pixels); gridlines are #e6e6e6


def has_axes(image, what):
    width, height, rows = image
    check((width, height) == (680, 420), f"{what}: {width}x{height}, expected 680x420")
    if (width, height) != (680, 420):
        return
    # The y axis at x = 80 from y = 40 to 356, the x axis at y = 356 from x = 80 to 510.
    y_axis = sum(dark(rows[y][x]) for y in range(50, 350, 10) for x in (79, 80, 81)) >= 30
    x_axis = sum(dark(rows[y][x]) for x in range(90, 500, 10) for y in (355, 356, 357)) >= 41
    check(y_axis and x_axis, f"{what}: axis lines missing (y axis {y_axis}, x axis {x_axis})")
    ink = sum(1 for row in rows for p in row if sum(p) < 600)
    check(ink > 2000, f"{what}: almost blank ({ink} non-white pixels)")


def label_boxes(svg):
    """Boxes of the point labels, estimated as the renderer places them (0.6 em per character)."""
    boxes = []
    for m in re.finditer(r'<text class="point-label" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        x, y, text = float(m.group(1)), float(m.group(2)), m.group(3)
        boxes.append((x, y - 12, x + 7.2 * len(text), y + 3))
    return boxes


def main():
    binary, source = sys.argv[1], sys.argv[2]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with tempfile.TemporaryDirectory() as tmp:
        figs = os.path.join(tmp, "figs")
        os.mkdir(figs)
        # Eight variants, timed briefly: the labels must still not collide.
        spec = os.path.join(tmp, "eight.yaml")
        with open(spec, "w") as f:
            f.write("name: eight\nblocks:\n  - {name: eight, dims: 2, batch: 2, size: 16, in_channels: 16,"
                    " out_channels: 16, kernel: 3, variants: [standard, bottleneck, separable,"
                    " {kind: bottleneck, name: bottleneck-r4, ratio: 4}, {kind: grouped, name: grouped-2, groups: 2},"
                    " {kind: grouped, name: grouped-4, groups: 4}, {kind: grouped, name: grouped-8, groups: 8},"
                    " {kind: grouped, name: grouped-16, groups: 16}]}\n")
        r = subprocess.run([binary, "compare", spec, "--device", "cpu", "--min-time", "0", "--min-samples", "3",
                            "--timeout", "0.2", "-q", "--plots", figs, "--peak-flops", "1e11", "--bandwidth", "2e10"],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"compare --plots exited {r.returncode}: {r.stderr}")
        svgs = sorted(glob.glob(os.path.join(figs, "*.svg")))
        names = [os.path.basename(s) for s in svgs]
        check(names == ["eight-memory-breakdown.svg", "eight-roofline.svg", "eight-time-vs-flops.svg"],
              f"figure files: {names}")
        for svg_path in svgs:
            with open(svg_path) as f:
                svg = f.read()
            check(svg.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"'),
                  f"{svg_path}: not a standalone SVG")
            boxes = label_boxes(svg)
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    check(not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]),
                          f"{os.path.basename(svg_path)}: point labels overlap: {a} {b}")
            pdf = svg_path[:-4] + ".pdf"
            if shutil.which("rsvg-convert"):
                check(os.path.exists(pdf), f"no PDF next to {svg_path}")
        if "eight-roofline.svg" in names:
            with open(os.path.join(figs, "eight-roofline.svg")) as f:
                check('class="roof-line"' in f.read(), "the roofline has no roof despite --peak-flops/--bandwidth")

        # Rendered as a reader would.
        target = os.path.join(figs, "eight-time-vs-flops.svg")
        if chromium and os.path.exists(target):
            png = os.path.join(tmp, "chromium.png")
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--window-size=680,420", f"--screenshot={png}", "file://" + target],
                           capture_output=True, timeout=120)
            check(os.path.exists(png), "Chromium wrote no screenshot")
            if os.path.exists(png):
                has_axes(read_png(png), "Chromium render of the SVG")
        else:
            print("SKIP part: chromium not installed (scripts/setup.sh installs it)")
        if shutil.which("pdftoppm") and os.path.exists(target[:-4] + ".pdf"):
            out = os.path.join(tmp, "page")
            subprocess.run(["pdftoppm", "-r", "96", "-singlefile", target[:-4] + ".pdf", out], check=True)
            has_axes(read_ppm(out + ".ppm"), "pdftoppm render of the PDF")

        # The HTML report fits a 1400-pixel window: its wide tables scroll inside their own box and
        # the page never scrolls sideways (Chromium lays it out; a script reports the widths).
        if chromium:
            page = os.path.join(tmp, "report.html")
            r = subprocess.run([binary, "compare", spec, "--device", "cpu", "--min-time", "0", "--min-samples", "2",
                                "--timeout", "0.1", "-q", "--html", page, "--peak-flops", "1e11", "--bandwidth",
                                "2e10"], capture_output=True, text=True)
            check(r.returncode == 0, f"compare --html exited {r.returncode}: {r.stderr}")
            with open(page) as f:
                html = f.read()
            probe = ("<script>const d=document.documentElement;const t=[...document.querySelectorAll('table')];"
                     "document.body.setAttribute('data-fit',JSON.stringify({page:d.scrollWidth,window:innerWidth,"
                     "tables:t.map(x=>x.getBoundingClientRect().right),scrolling:t.filter(x=>x.scrollWidth>"
                     "x.clientWidth).length}));</script>")
            probed = os.path.join(tmp, "probed.html")
            with open(probed, "w") as f:
                f.write(html.replace("</body>", probe + "</body>"))
            dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                                  "--dump-dom", "file://" + probed], capture_output=True, text=True, timeout=120)
            m = re.search(r'data-fit="([^"]*)"', dom.stdout)
            check(m is not None, f"Chromium did not run the probe: {dom.stderr[-500:]}")
            if m:
                fit = json.loads(m.group(1).replace("&quot;", '"'))
                check(fit["page"] <= fit["window"], f"the report scrolls sideways: {fit}")
                check(all(right <= fit["window"] for right in fit["tables"]), f"a table overflows the window: {fit}")
                check(fit["scrolling"] >= 1, f"the wide table of eight variants should scroll in its box: {fit}")

        # A DIR that is not there yet is made, as `mkdir DIR` would (its parent must exist).
        made = os.path.join(tmp, "new-figures")
        r = subprocess.run([binary, "compare", spec, "--device", "cpu", "--min-time", "0", "--min-samples", "2",
                            "--timeout", "0.1", "-q", "--filter", "standard", "--plots", made],
                           capture_output=True, text=True)
        check(r.returncode == 0 and os.path.isdir(made) and glob.glob(os.path.join(made, "*.svg")),
              f"--plots into a new folder: exit {r.returncode}, {r.stderr}")
        # One whose parent is not there either is a bad input, before any work, and nothing is made.
        deep = os.path.join(tmp, "missing", "figs")
        bad = subprocess.run([binary, "analyze", spec, "--plots", deep], capture_output=True, text=True)
        check(bad.returncode == 2 and "--plots" in bad.stderr and "parent" in bad.stderr,
              f"missing parent: exit {bad.returncode}, {bad.stderr}")
        check(not os.path.exists(os.path.join(tmp, "missing")), "a refused --plots made a folder")
        # Another output refused before the work (--json names a directory): no new folder either.
        fails = os.path.join(tmp, "fails")
        os.mkdir(os.path.join(tmp, "out.json"))
        bad = subprocess.run([binary, "analyze", spec, "--plots", fails, "--json", os.path.join(tmp, "out.json")],
                             capture_output=True, text=True)
        check(bad.returncode == 2 and not os.path.exists(fails),
              f"a refused --json: exit {bad.returncode}, folder left: {os.path.exists(fails)}; {bad.stderr}")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

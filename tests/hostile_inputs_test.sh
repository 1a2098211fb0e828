#!/usr/bin/env bash
# convbench against hostile inputs and output-path tricks, end to end through the CLI, in a
# private temporary folder (as root where the machine allows: device nodes of its own via mknod,
# a private tmpfs for the full disk; never the real /dev entries as outputs):
#  - every malformed spec and results file of tests/data/malformed (expected.txt): exit 2, one
#    line naming the file and the key path, no output file, through validate / analyze and
#    report (two formats) / diff (both sides) / report --against;
#  - inputs generated here: a results file nested 100k deep, 100k variants in one block (in CPU
#    time linear in the variants), a spec over the size limit, a FIFO, /dev/zero, standard input;
#  - numeric options out of range (NaN, negative, too large);
#  - names with ESC, NUL, newlines, | and commas in every output format (no raw control bytes;
#    CSV read back by Python's csv module, LaTeX compiled by pdflatex, Markdown rows intact);
#  - outputs: a device node, a symlink, an input, the same path twice, a planted symlink at the
#    old temporary name, a missing folder, a full disk: nothing lost or overwritten;
#  - a block whose predicted peak exceeds the host's memory: its row is `oom`, the others run.
# Usage: hostile_inputs_test.sh CONVBENCH SOURCE_DIR
set -uo pipefail
cb=$1 source=$2
data=$source/tests/data/malformed
work=$(mktemp -d /tmp/convbench-hostile-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error EXIT PATTERN COMMAND...: the exit code, one line on stderr matching PATTERN, and
# no file left in ./out/.
expect_error() {
  local want=$1 pattern=$2 rc lines
  shift 2
  rm -rf out && mkdir out
  # A guard against a hang, not a speed limit: the sanitizer build on a busy machine is slow.
  timeout 300 "$@" >stdout.txt 2>stderr.txt
  rc=$?
  lines=$(wc -l <stderr.txt)
  [ "$rc" = "$want" ] || fail "exit $rc (expected $want): $*: $(head -c 300 stderr.txt)"
  [ "$lines" = 1 ] || fail "$lines lines on stderr (expected one): $*: $(head -c 300 stderr.txt)"
  grep -qE -- "$pattern" stderr.txt || fail "stderr does not match /$pattern/: $*: $(head -c 300 stderr.txt)"
  LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' stderr.txt && fail "raw control characters on stderr: $*"
  [ -z "$(ls -A out)" ] || fail "output written although the input was bad: $*: $(ls -A out)"
}

good_spec=$data/specs/good.yaml
good=$data/results/good.json

# ---- the malformed corpus ------------------------------------------------------------------
while IFS=$'\t' read -r file pattern; do
  case $file in '#'*|'') continue ;; esac
  path=$data/$file
  [ -f "$path" ] || { fail "expected.txt names $file, which is not there"; continue; }
  full="^error: $(printf '%s' "$path" | sed 's/[][\.*^$+?(){}|/]/\\&/g')$pattern"
  case $file in
    specs/*)
      expect_error 2 "$full" "$cb" validate "$path"
      expect_error 2 "$full" "$cb" analyze "$path" --json out/a.json --csv out/a.csv ;;
    results/*)
      expect_error 2 "$full" "$cb" report "$path"
      expect_error 2 "$full" "$cb" report "$path" --format html -o out/r.html
      expect_error 2 "$full" "$cb" diff "$path" "$good" --markdown out/d.md
      expect_error 2 "$full" "$cb" diff "$good" "$path"
      expect_error 2 "$full" "$cb" report "$good" --against "$path" -o out/c.md --format md ;;
  esac
done <"$data/expected.txt"
# Every file of the corpus is in expected.txt (but the two good ones and the hostile names).
for f in "$data"/specs/* "$data"/results/*; do
  name=${f#"$data"/}
  case $name in specs/good.yaml|results/good.json|results/hostile-names.json) continue ;; esac
  grep -q "^$name	" "$data/expected.txt" || fail "$name has no line in expected.txt"
done

# ---- inputs made here ---------------------------------------------------------------------
python3 - <<'EOF'
depth = 100000
open("deep.json", "w").write('{"schema": "convbench.results/1", "provenance": ' + "[" * depth + "]" * depth +
                             ', "results": []}')
head = ["blocks:", "  - name: b", "    in_channels: 4", "    out_channels: 8", "    batch: 1", "    size: 8",
        "    variants:"]
for count, name in ((100000, "many-variants.yaml"), (10000, "tenth-variants.yaml")):
    lines = head + ["      - {kind: standard, name: v%d}" % i for i in range(count)]
    open(name, "w").write("\n".join(lines) + "\n")
open("huge.yaml", "w").write("# " + "x" * (17 << 20) + "\n")
EOF
for command in "report deep.json" "diff deep.json $good" "diff $good deep.json" "report $good --against deep.json"; do
  # shellcheck disable=SC2086
  expect_error 2 '^error: deep\.json: provenance(\[0\]){7}\.\.\. \(64 levels\): the results file is nested more than 64 levels deep$' "$cb" $command
done
expect_error 2 'many-variants\.yaml:2:3: blocks: the spec expands to 100000 runs \(1 block x 1 sweep point, 100000 variants in all\)' "$cb" validate many-variants.yaml
# Validation grows linearly with the variants: ten times the variants cost at most 30 times the
# CPU time (linear is 10, a quadratic step would be 100). CPU time, not a
# wall-clock limit: the rule holds on a busy machine and in the sanitizer build (8x slower).
cpu_seconds() { # cpu_seconds FILE: validate FILE, print its user+system seconds
  local TIMEFORMAT='%U %S'
  { time timeout 600 "$cb" validate "$1" --max-runs 100000 >stdout.txt 2>&1; } 2>cpu.txt ||
    fail "$1 did not validate: $(tail -c 300 stdout.txt)"
  awk '{ print $1 + $2 }' cpu.txt
}
tenth=$(cpu_seconds tenth-variants.yaml)
whole=$(cpu_seconds many-variants.yaml)
grep -q 'ok (1 block points, 100000 variant runs)' stdout.txt || fail "validate of 100000 variants said: $(cat stdout.txt)"
awk -v tenth="$tenth" -v whole="$whole" 'BEGIN { exit !(whole <= 30 * (tenth > 0.05 ? tenth : 0.05)) }' ||
  fail "100000 variants took ${whole} s of CPU time, 10000 took ${tenth} s: more than 30 times for 10 times the variants"
expect_error 2 '^error: huge\.yaml: the spec file is larger than 16 MiB: not read$' "$cb" validate huge.yaml
mkfifo spec.fifo
expect_error 2 '^error: spec\.fifo: is a FIFO, not a spec file: give a regular file, or - for standard input$' \
  "$cb" validate spec.fifo
expect_error 2 '^error: /dev/zero: is a device, not a spec file' "$cb" analyze /dev/zero
expect_error 2 'is a FIFO, not a spec file' bash -c "'$cb' validate <(cat '$good_spec')"
# Standard input is read once, and its hash is the hash of what was read.
"$cb" analyze - --json stdin.json <"$good_spec" >/dev/null || fail "analyze - < spec failed"
want_hash=$(sha256sum "$good_spec" | cut -d' ' -f1)
python3 -c "import json,sys; p=json.load(open('stdin.json'))['provenance']; sys.exit(0 if p['spec_sha256']=='$want_hash' and p['spec_file']=='standard input' else 1)" ||
  fail "analyze - recorded another hash or file name than the bytes it read"

# ---- options out of range ----------------------------------------------------------------------
for option in "--timeout nan" "--timeout inf" "--timeout -1" "--min-time -0.5" "--max-noise -1" "--min-samples -1" \
              "--min-samples 0" "--per-op -1" "--seed -1" "--seed 1e23" "--max-runs 0"; do
  # shellcheck disable=SC2086
  expect_error 2 "${option%% *}" "$cb" compare "$good_spec" --device reference --memory-only $option --json out/x.json
done
expect_error 2 '^error: command line: --memory-limit: size too large: 99999999999999999999$' \
  "$cb" compare "$good_spec" --memory-limit 99999999999999999999 --json out/x.json
expect_error 2 '--time-threshold' "$cb" diff "$good" "$good" --time-threshold nan

# ---- hostile names in every output format ----------------------------------------------------
hostile=$data/results/hostile-names.json
for format in table md csv latex html gbench-json json; do
  "$cb" report "$hostile" --format "$format" -o "names.$format" || fail "report --format $format of hostile names failed"
  LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "names.$format" && fail "raw control characters in --format $format"
done
"$cb" report "$hostile" | LC_ALL=C grep -qP '\x1b' && fail "an ESC from a name reached the terminal"
python3 - names.csv "$hostile" <<'EOF' || fail "the CSV does not read back with Python's csv module"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
src = json.load(open(sys.argv[2]))["results"][0]
def printable(s):
    return "".join(c if 0x20 <= ord(c) != 0x7f else {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c, "\\x%02x" % ord(c)) for c in s)
assert len(rows) == 1, rows
assert rows[0]["block"] == printable(src["block"]), (rows[0]["block"], printable(src["block"]))
assert rows[0]["variant"] == printable(src["variant"]), rows[0]["variant"]
EOF
# Every Markdown table row has as many unescaped | as the header.
awk '/^\|/ { line = $0; gsub(/\\\|/, "", line); n = gsub(/\|/, "", line); if (!cols) cols = n; else if (n != cols) bad = 1 }
     END { exit bad }' names.md || fail "a Markdown table row of hostile names has the wrong number of cells"
if command -v pdflatex >/dev/null; then
  printf '%s\n' '\documentclass{article}' '\usepackage{booktabs}' '\usepackage[margin=1cm,landscape]{geometry}' \
    '\begin{document}' '\input{names.latex}' '\end{document}' >doc.tex
  pdflatex -interaction=nonstopmode -halt-on-error doc.tex >latex.log 2>&1 || fail "pdflatex rejects the LaTeX of hostile names: $(grep -m3 '^!' latex.log)"
elif grep -q '^ID=debian' /etc/os-release 2>/dev/null; then
  fail "pdflatex is missing (scripts/setup.sh installs texlive-latex-base)"
else
  echo "note: no pdflatex on this machine (not Debian: the GPU machine's image); the LaTeX was not compiled"
fi

# ---- output paths ----------------------------------------------------------------------------
cp "$good_spec" spec.yaml
cp "$good" base.json
cp "$good" new.json
echo precious >victim
ln -s victim link.json
expect_error 2 '^error: link\.json: --json: is a symbolic link' "$cb" analyze spec.yaml --json link.json
[ "$(cat victim)" = precious ] && [ -L link.json ] || fail "the symlinked output or its target changed"
ln -s victim p.json.tmp
"$cb" analyze spec.yaml --json p.json >/dev/null || fail "analyze --json p.json failed beside a planted p.json.tmp"
[ "$(cat victim)" = precious ] || fail "a planted symlink at the old temporary name made convbench overwrite its target"
if [ "$(id -u)" = 0 ] && mknod null c 1 3 2>/dev/null; then
  expect_error 2 '^error: null: -o: is a device, not a file' "$cb" report "$good" -o null
  [ -c null ] || fail "the device node was replaced"
fi
expect_error 2 '^error: spec\.yaml: --csv: is also an input of this command \(spec\.yaml\)' "$cb" analyze spec.yaml --csv spec.yaml
cmp -s spec.yaml "$good_spec" || fail "the spec was overwritten"
expect_error 2 '^error: base\.json: --markdown: is also an input of this command' "$cb" diff base.json new.json --markdown base.json
cmp -s base.json "$good" || fail "the diff base was overwritten"
expect_error 2 'out/x\.csv: --csv: is also the output of --json' "$cb" analyze spec.yaml --json out/x.csv --csv ./out/x.csv
expect_error 2 '^error: nodir/r\.html: --html: its directory nodir does not exist$' \
  "$cb" analyze spec.yaml --csv out/a.csv --json out/a.json --html nodir/r.html
"$cb" analyze spec.yaml --json - >stdout.json 2>stderr.txt || fail "analyze --json - failed"
python3 -c "import json; json.load(open('stdout.json'))" 2>/dev/null || fail "--json - did not put JSON alone on stdout"
[ ! -e ./- ] || fail "--json - created a file named -"

# A full disk: a private 64 KiB tmpfs, an old results file on it, and an output that does not fit.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  mkdir disk
  unshare -m bash -c "
    mount -t tmpfs -o size=64k tmpfs disk || exit 77
    echo old >disk/r.json
    '$cb' analyze many-variants.yaml --max-runs 100000 --json disk/r.json >/dev/null 2>full.err
    echo \$? >full.rc
    cat disk/r.json >full.content
    ls -A disk >full.ls"
  if [ "$(cat full.rc 2>/dev/null)" = "" ]; then
    echo "note: could not mount a tmpfs here; the full-disk case was not run"
  else
    [ "$(cat full.rc)" = 2 ] || fail "a full disk: exit $(cat full.rc), expected 2"
    grep -q 'No space left on device' full.err || fail "a full disk: the error does not give the reason: $(cat full.err)"
    [ "$(cat full.content)" = old ] || fail "a full disk: the old file was not left as it was"
    [ "$(cat full.ls)" = r.json ] || fail "a full disk: temporaries left behind: $(cat full.ls)"
  fi
fi

# ---- host memory ------------------------------------------------------------------------------
cat >memory.yaml <<'EOF'
blocks:
  - {name: small, batch: 1, in_channels: 4, out_channels: 8, size: 8, variants: [standard]}
  - {name: enormous, batch: 4096, in_channels: 256, out_channels: 256, size: 512, variants: [standard]}
EOF
# The reference backend's loops count in 64 bits: the host's memory is its limit. On the cpu, each
# of the enormous block's 1 TiB tensors is beyond oneDNN's 32-bit sizes first (unsupported).
for device in reference cpu; do
  timeout 300 "$cb" compare memory.yaml --device $device --memory-only -q --json memory.json >memory.out 2>&1 ||
    fail "compare --device $device of a block larger than the host's memory did not finish with exit 0: $(tail -c 300 memory.out)"
  python3 - $device <<'EOF' || fail "--device $device: the rows of a block larger than the host's memory are not small=ok, enormous=oom (cpu: unsupported)"
import json, sys
rows = {r["block"]: r for r in json.load(open("memory.json"))["results"]}
assert rows["small"]["status"] == "ok", rows["small"]
if sys.argv[1] == "reference":
    assert rows["enormous"]["status"] == "oom", rows["enormous"]["status"]
    assert "does not fit the host's memory" in rows["enormous"]["message"], rows["enormous"]["message"]
else:
    assert rows["enormous"]["status"] == "unsupported", rows["enormous"]["status"]
    assert "at most 2147483647 bytes" in rows["enormous"]["message"], rows["enormous"]["message"]
EOF
done

if [ "$failures" = 0 ]; then echo "PASS: hostile inputs and output paths"; exit 0; fi
echo "$failures failures"
exit 1

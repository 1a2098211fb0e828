#!/usr/bin/env bash
# Shard files name their plan file instead of carrying the plan (issue 37, item 12): a plan of 200
# items run as 200 one-item shards (--memory-only, a tiny block) gives 200 files that together stay
# under 200 x 16 KiB, where each file used to carry the whole plan (48 KiB here: about 10 MiB in
# all, quadratic in the plan). They merge whole; their folder moved whole still merges; a shard
# run without --plan carries its plan and merges with the rest; a missing, edited or replaced plan
# file is exit 2 naming the file, with nothing written.
#
#   tests/shard_plan_file_test.sh CONVBENCH
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
n=200
dir=$tmp/sweep
mkdir "$dir"
cat >"$tmp/spec.yaml" <<'EOF'
blocks:
  - {name: tiny, dims: 2, batch: 1, in_channels: 2, out_channels: 2, size: 4, kernel: 1, norm: none,
     act: none, variants: [standard]}
EOF
sweep="batch=$(seq -s, 1 $n)"
"$bin" plan "$tmp/spec.yaml" --sweep "$sweep" --shards $n -o "$dir/plan.json" >/dev/null 2>&1
run_shard() { # I FILE [--plan PLAN]
  local i=$1 out=$2
  shift 2
  "$bin" compare "$tmp/spec.yaml" --sweep "$sweep" "$@" --shard "$i/$n" --json "$out" -q --device cpu \
    --memory-only --threads 1 >/dev/null 2>"$tmp/shard.err" || fail "shard $i: $(cat "$tmp/shard.err")"
}
for ((i = 0; i < n; i++)); do run_shard $i "$dir/shard-$i.json" --plan "$dir/plan.json"; done

plan_bytes=$(stat -c %s "$dir/plan.json")
total=$(cat "$dir"/shard-*.json | wc -c)
bound=$((n * 16 * 1024))
echo "plan file: $plan_bytes bytes; $n shard files: $total bytes in all (bound $bound)"
[ "$total" -lt "$bound" ] || fail "$n shard files hold $total bytes, over $bound: do they carry the plan?"
python3 - "$dir/shard-0.json" <<'PY' || fail "shard-0.json does not name its plan file"
import json, sys
shard = json.load(open(sys.argv[1]))["shard"]
assert shard["schema"] == "convbench.shard/2" and shard["plan_file"] == "plan.json" and "plan" not in shard, shard
PY

"$bin" merge "$dir"/shard-*.json -o "$tmp/merged.json" 2>"$tmp/merge.err" || fail "merge: $(cat "$tmp/merge.err")"
grep -q "$n of $n items" "$tmp/merge.err" || fail "not every item merged: $(cat "$tmp/merge.err")"

# The folder moved whole: the shards name the plan relative to themselves.
mv "$dir" "$tmp/moved"
dir=$tmp/moved
"$bin" merge "$dir"/shard-*.json -o "$tmp/moved.json" 2>"$tmp/moved.err" || fail "merge after a move: $(cat "$tmp/moved.err")"

# A shard run without a plan file carries its plan, and merges with the shards that name theirs.
run_shard 0 "$tmp/carried-0.json"
python3 -c 'import json,sys; assert "plan" in json.load(open(sys.argv[1]))["shard"]' "$tmp/carried-0.json" ||
  fail "a shard without --plan does not carry its plan"
"$bin" merge "$tmp/carried-0.json" "$dir"/shard-{1..199}.json -o "$tmp/mixed.json" 2>"$tmp/mixed.err" ||
  fail "a carrying shard does not merge with naming ones: $(cat "$tmp/mixed.err")"

# A refused merge: exit 2, the message names FILE, nothing written.
refused() { # WHAT FILE MESSAGE SHARDS...
  local what=$1 file=$2 message=$3 rc=0
  shift 3
  "$bin" merge "$@" -o "$tmp/refused.json" 2>"$tmp/refused.err" || rc=$?
  [ $rc = 2 ] || fail "$what: merge exited $rc: $(cat "$tmp/refused.err")"
  grep -qF "$file" "$tmp/refused.err" || fail "$what: $file not named: $(cat "$tmp/refused.err")"
  grep -qF "$message" "$tmp/refused.err" || fail "$what: unclear message: $(cat "$tmp/refused.err")"
  [ ! -e "$tmp/refused.json" ] || fail "$what: a refused merge wrote its output"
}
# Shard files copied away from their plan.
mkdir "$tmp/copied"
cp "$dir"/shard-{0,1}.json "$tmp/copied/"
refused "plan file missing" "$tmp/copied/shard-0.json: shard.plan_file" "$tmp/copied/plan.json, which cannot be read" \
  "$tmp/copied"/shard-{0,1}.json
# The plan file edited: the hash over its items no longer matches.
cp "$dir/plan.json" "$tmp/plan.orig"
sed -i '0,/"id": "[0-9a-f]*"/s//"id": "0123456789abcdef"/' "$dir/plan.json"
refused "plan file edited" "$dir/plan.json: plan_hash" "does not match the listed items" "$dir"/shard-*.json
# The plan file replaced by another spec's plan.
"$bin" plan "$tmp/spec.yaml" --sweep "batch=1,2" -o "$dir/plan.json" >/dev/null 2>&1
refused "plan file replaced" "shard-0.json: shard.plan_file" "the plan file was replaced" "$dir"/shard-*.json
cp "$tmp/plan.orig" "$dir/plan.json"
"$bin" merge "$dir"/shard-*.json -o "$tmp/restored.json" 2>/dev/null || fail "merge with the plan file restored"
echo "ok: $n shard files name their plan ($total bytes in all, plan $plan_bytes bytes)"

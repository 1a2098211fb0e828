#!/usr/bin/env bash
# scripts/git-hooks/commit-msg (CONTRIBUTING.md, "Commit messages") takes a subject of at most 72
# characters with a blank second line, and refuses a longer subject or a body on line two.
set -euo pipefail
hook=$1/scripts/git-hooks/commit-msg
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
subject72=$(printf 'x%.0s' $(seq 72))
printf '%s\n\nWhy it changed.\n# a comment git strips\n' "$subject72" >"$work/ok"
"$hook" "$work/ok" || fail "a 72-character subject with a body was refused"
printf '%sy\n\nbody\n' "$subject72" >"$work/long"
"$hook" "$work/long" 2>"$work/long.err" && fail "a 73-character subject was accepted"
grep -q 'the subject is 73 characters; at most 72' "$work/long.err" || fail "the refusal does not say the length"
printf 'Subject\nbody on line two\n' >"$work/nobreak"
"$hook" "$work/nobreak" 2>/dev/null && fail "a body on the second line was accepted"
printf '# only a comment\n' >"$work/empty"
"$hook" "$work/empty" 2>/dev/null && fail "an empty message was accepted"
echo "ok: the commit-msg hook keeps subjects to 72 characters and a blank second line"

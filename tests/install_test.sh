#!/usr/bin/env bash
# convbench installs as command-line tools do (issue 55, item 8): `cmake --install BUILD --prefix
# DIR` gives a DIR/bin/convbench that runs from anywhere, with neither the checkout nor the build
# folder on PATH, on the example specs installed with it; the same tree moved elsewhere still runs
# (nothing absolute is baked in); compare --peer finds the peer's scripts installed beside it, not
# the checkout's; the bash completion completes subcommands, options and their values, and is what
# the installed program prints; the zsh one parses (where zsh is installed). Where cpack and
# dpkg-deb are, the Debian package of that tree is made with the project's CPack settings
# (cmake/packaging.cmake: name, version, Depends from dpkg-shlibdeps), unpacked into a scratch
# root (never installed on this machine) and its program run.
#
#   tests/install_test.sh BUILD_DIR CMAKE CPACK
set -euo pipefail
build=$1 cmake=$2 cpack=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# The installed program as a user runs it: a bare environment, elsewhere than the checkout.
mkdir "$tmp/home" "$tmp/elsewhere"
bare() { (cd "$tmp/elsewhere" && env -i HOME="$tmp/home" PATH=/usr/bin:/bin "$@"); }
elapsed() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

# Runs PROGRAM --version and analyze of the quick tour installed in CONFIGS; checks the table.
runs() { # WHAT PROGRAM CONFIGS
  local what=$1 program=$2 configs=$3 out
  out=$(bare "$program" --version 2>&1) || fail "$what: --version exited $?: $out"
  [[ $out == "convbench "* ]] || fail "$what: --version printed: $out"
  out=$(bare "$program" analyze "$configs/quick-tour.yaml" 2>&1) || fail "$what: analyze exited $?: $out"
  for want in "vnet-block: input 2x16x16x16x16, float32, channels_first, train" "standard (base)  13,920" \
    "bottleneck        7,872" "separable         1,088"; do
    grep -qF -- "$want" <<<"$out" || fail "$what: analyze's table lacks \"$want\":"$'\n'"$out"
  done
  echo "ok: $what: --version and analyze of the installed quick tour"
}

prefix=$tmp/prefix
start=$(date +%s.%N)
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  fail "cmake --install exited $?: $(tail -20 "$tmp/install.log")"
echo "ok: cmake --install into $prefix ($(find "$prefix" -type f | wc -l) files)"
for f in bin/convbench share/convbench/configs/quick-tour.yaml share/convbench/configs/seed-blocks.yaml \
  share/convbench/configs/README.md share/convbench/scripts/torch_peer.py share/convbench/scripts/peer/cli.py \
  share/convbench/scripts/peer-python.sh share/convbench/tests/vbnet_reference.py share/doc/convbench/README.md \
  share/doc/convbench/CITATION.cff share/doc/convbench/app/README.md share/doc/convbench/configs/README.md \
  share/doc/convbench/lib/README.md share/doc/convbench/results/README.md \
  share/bash-completion/completions/convbench share/zsh/site-functions/_convbench; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
[ -x "$prefix/bin/convbench" ] || fail "bin/convbench is not executable"
missing=$(ldd "$prefix/bin/convbench" | grep "not found" || true)
[ -z "$missing" ] || fail "the installed program's libraries are not found: $missing"
runs "installed" "$prefix/bin/convbench" "$prefix/share/convbench/configs"

# compare --peer torch uses the scripts installed with the program. Without a peer environment it
# stops before measuring, naming the environment beside those scripts (peer-python.sh's default).
out=$(bare "$prefix/bin/convbench" compare --peer torch "$prefix/share/convbench/configs/quick-tour.yaml" 2>&1) &&
  fail "compare --peer torch without a peer environment exited 0"
grep -qF "$prefix/share/convbench/.venv-peers is not ready" <<<"$out" ||
  fail "compare --peer torch did not look beside the installed program: $out"
echo "ok: compare --peer torch looks for its scripts in $prefix/share/convbench"

# Relocatable: the tree moved after installing still runs and finds its scripts.
mv "$prefix" "$tmp/moved"
runs "moved elsewhere" "$tmp/moved/bin/convbench" "$tmp/moved/share/convbench/configs"
out=$(bare "$tmp/moved/bin/convbench" compare --peer torch "$tmp/moved/share/convbench/configs/quick-tour.yaml" 2>&1) &&
  fail "compare --peer torch in the moved tree exited 0"
grep -qF "$tmp/moved/share/convbench/.venv-peers is not ready" <<<"$out" ||
  fail "compare --peer torch in the moved tree did not look beside it: $out"
mv "$tmp/moved" "$prefix"

# bash completion: loads, registers, completes, and is what the installed program prints now.
completion=$prefix/share/bash-completion/completions/convbench
bare "$prefix/bin/convbench" completion bash | cmp -s - "$completion" ||
  fail "the installed bash completion differs from what the installed convbench prints"
registered=$(bash --norc --noprofile -c "source '$completion' && complete -p convbench") ||
  fail "sourcing the bash completion failed"
[ "$registered" = "complete -F _convbench convbench" ] || fail "complete -p convbench: $registered"
complete_words() { # WORD... (the last is the one being completed): prints COMPREPLY, one a line
  bash --norc --noprofile -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _convbench
                              printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@"
}
expect() { # WANT WORD...: WANT among the completions of WORD...
  local want=$1 got
  shift
  got=$(cd "$tmp/elsewhere" && complete_words "$@")
  grep -qxF -- "$want" <<<"$got" || fail "completing \"$*\" gave [$(tr '\n' ' ' <<<"$got")], without $want"
}
expect compare convbench comp
expect completion convbench comp
expect add convbench history a
expect --device convbench compare --dev
expect cuda convbench compare --device ''
expect cuda convbench compare --device = c
expect never convbench analyze -v --color n
expect zsh convbench completion ''
expect "$prefix/share/convbench/configs/quick-tour.yaml" convbench analyze "$prefix/share/convbench/configs/quick"
got=$(complete_words convbench comp)
[ "$(sort <<<"$got" | tr '\n' ' ')" = "compare completion " ] || fail "convbench comp<TAB> gave: $got"
echo "ok: bash completion: subcommands, options, their values, file names"

if command -v zsh >/dev/null; then
  zcompletion=$prefix/share/zsh/site-functions/_convbench
  zsh -n "$zcompletion" || fail "the zsh completion does not parse"
  # Its function driven as zsh's completion system would: compadd and _files stand in for the
  # system's own, printing what they were given.
  zcomplete() { # WORD...: what the zsh completion offers for the last word
    zsh -f -c 'compdef() { :; }; compset() { :; }; _files() { print FILES; }
               compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -l -- "$@"; }
               source "$1"; shift; words=("$@"); CURRENT=$#; _convbench' _ "$zcompletion" "$@"
  }
  [ "$(zcomplete convbench comp | sort | tr '\n' ' ')" = "advise analyze compare completion diff explain export history list merge plan report slurm validate verify " ] ||
    fail "zsh: convbench <TAB> gave: $(zcomplete convbench comp | tr '\n' ' ')"
  zcomplete convbench compare --device '' | grep -qx cuda || fail "zsh: compare --device <TAB> does not offer cuda"
  zcomplete convbench history check --d | grep -qx -- --db || fail "zsh: history check --d<TAB> does not offer --db"
  zcomplete convbench analyze '' | grep -qx FILES || fail "zsh: analyze <TAB> does not complete file names"
  echo "ok: zsh completion: subcommands, options, their values, file names"
else
  echo "zsh is not installed: the zsh completion's syntax is not checked"
fi
echo "install and checks: $(elapsed) s"

# The Debian package. From a staged install rather than the build folder: `cpack -G DEB` there
# first builds every target (its preinstall step), which in a test would rebuild whatever files
# are being edited meanwhile. The package's settings are the build's (CPackConfig.cmake).
if ! command -v dpkg-deb >/dev/null || [ ! -x "$cpack" ] || [ ! -f "$build/CPackConfig.cmake" ]; then
  echo "no cpack, dpkg-deb or CPackConfig.cmake: the Debian package is not checked"
  exit 0
fi
start=$(date +%s.%N)
"$cmake" --install "$build" --prefix "$tmp/stage/usr" --strip >"$tmp/stage.log" 2>&1 ||
  fail "cmake --install --strip exited $?: $(tail -20 "$tmp/stage.log")"
cat >"$tmp/cpack-config.cmake" <<EOF
include("$build/CPackConfig.cmake")
set(CPACK_INSTALL_CMAKE_PROJECTS "")
set(CPACK_INSTALLED_DIRECTORIES "$tmp/stage;.")
EOF
(cd "$tmp" && "$cpack" -G DEB --config "$tmp/cpack-config.cmake" -B "$tmp/deb") >"$tmp/cpack.log" 2>&1 ||
  fail "cpack exited $?: $(tail -20 "$tmp/cpack.log")"
debs=("$tmp"/deb/convbench_*.deb)
[ -f "${debs[0]}" ] || fail "cpack made no convbench_*.deb: $(ls "$tmp/deb")"
deb=${debs[0]}
version=$(bare "$prefix/bin/convbench" --version | sed -n '1s/^convbench \([^ ]*\) .*/\1/p')
info=$(dpkg-deb --info "$deb")
for want in "Package: convbench" "Version: $version" "Maintainer: " "Depends: " "libdnnl" "libyaml-cpp"; do
  grep -qF -- "$want" <<<"$info" || fail "dpkg-deb --info lacks \"$want\":"$'\n'"$info"
done
contents=$(dpkg-deb --contents "$deb")
for want in ./usr/bin/convbench ./usr/share/convbench/configs/quick-tour.yaml \
  ./usr/share/bash-completion/completions/convbench ./usr/share/zsh/site-functions/_convbench \
  ./usr/share/doc/convbench/README.md; do
  grep -qE -- " $want\$" <<<"$contents" || fail "the package lacks $want"
done
dpkg-deb -x "$deb" "$tmp/root"
runs "unpacked from $(basename "$deb")" "$tmp/root/usr/bin/convbench" "$tmp/root/usr/share/convbench/configs"
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes; $(grep '^ Depends:' <<<"$info")"
echo "package made and checked: $(elapsed) s"

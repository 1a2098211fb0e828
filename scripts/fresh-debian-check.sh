#!/usr/bin/env bash
# Proves that the README's two commands work on a machine that starts with nothing but Debian 12:
# builds a minimal Debian 12 root with debootstrap (--variant=minbase: the Priority: required
# packages and apt, nothing else), clones this repository's HEAD into it, and runs, inside it as
# root, exactly what the README tells a new user to run:
#
#   scripts/convbench compare configs/seed-blocks.yaml
#   scripts/test.sh
#
# Each command's time and exit code are printed and written to DIR/fresh-debian-check.log; the
# whole output of each is in DIR/convbench.log and DIR/test.log. The CUDA toolkit is not in the
# root (it is not a Debian package), so the CUDA backend is not built there: that is what a new
# user without CUDA gets.
#
# Usage: scripts/fresh-debian-check.sh [DIR]      (default /tmp/convbench-fresh-debian)
# Needs root, and network access to the Debian mirror this machine's apt uses. It installs
# debootstrap on this machine when missing; the root is rebuilt from scratch on every run.
# Takes about 30 minutes on 2 cores (debootstrap, the packages, the build, the tests); the
# figures of the last run are in scripts/README.md, "The first hour on a fresh machine".
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/convbench-fresh-debian}
chroot_dir=$work/root
[ "$(id -u)" = 0 ] || { echo "fresh-debian-check: run as root (debootstrap and chroot need it)" >&2; exit 2; }

# The mirror and suites this machine's apt uses, so the root gets the same package versions.
mirror=http://deb.debian.org/debian
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  found=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  [ -n "$found" ] && mirror=$found
fi

unmount_all() {
  for m in dev/pts dev proc sys; do
    mountpoint -q "$chroot_dir/$m" 2>/dev/null && umount -l "$chroot_dir/$m"
  done
  return 0
}
trap unmount_all EXIT

if ! command -v debootstrap >/dev/null; then
  echo "fresh-debian-check: installing debootstrap on this machine" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

unmount_all
rm -rf --one-file-system "$work"
mkdir -p "$work"
echo "fresh-debian-check: debootstrap --variant=minbase bookworm from $mirror" >&2
start=$(date +%s)
debootstrap --variant=minbase bookworm "$chroot_dir" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
debootstrap_s=$(($(date +%s) - start))
# The same apt sources as this machine (bookworm, -updates, -security), and name resolution.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  rm -f "$chroot_dir/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/debian.sources "$chroot_dir/etc/apt/sources.list.d/"
fi
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
# This machine's way to PyPI (its pip.conf and the certificate bundle it names), for the peer
# environment the test command makes: network configuration, like the apt sources above.
# The bundle goes where no package writes: at /etc/ssl/certs, Debian's ca-certificates (which
# setup.sh pulls in) would replace it with its own, without this machine's proxy certificate.
if [ -f /etc/pip.conf ]; then
  cert=$(awk -F' *= *' '$1 == "cert" {print $2}' /etc/pip.conf)
  if [ -n "$cert" ] && [ -f "$cert" ]; then
    cp "$cert" "$chroot_dir/etc/pip-fresh-check-ca.crt"
    sed "s|^cert *= *.*|cert = /etc/pip-fresh-check-ca.crt|" /etc/pip.conf >"$chroot_dir/etc/pip.conf"
  else
    cp /etc/pip.conf "$chroot_dir/etc/pip.conf"
  fi
fi
packages_before=$(chroot "$chroot_dir" dpkg-query -W -f='${Package}\n' | wc -l)

# A fresh clone of what is committed here, as a new user gets it.
git clone -q "$root_dir" "$chroot_dir/root/convbench"
git -C "$chroot_dir/root/convbench" log -1 --format='fresh-debian-check: commit %h %s' >&2

mount -t proc proc "$chroot_dir/proc"
mount -t sysfs sys "$chroot_dir/sys"
mount --bind /dev "$chroot_dir/dev"
mount --bind /dev/pts "$chroot_dir/dev/pts"

run_in_root() {  # run_in_root NAME COMMAND: its output to $work/NAME.log, its time and exit code back
  local name=$1 command=$2 t0 rc=0
  t0=$(date +%s)
  chroot "$chroot_dir" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb LANG=C.UTF-8 bash -c "cd /root/convbench && $command" >"$work/$name.log" 2>&1 || rc=$?
  echo "$name|$command|$rc|$(($(date +%s) - t0))"
}
results=()
echo "fresh-debian-check: running the main command" >&2
results+=("$(run_in_root convbench 'scripts/convbench compare configs/seed-blocks.yaml')")
echo "fresh-debian-check: running the test command" >&2
results+=("$(run_in_root test 'scripts/test.sh')")
packages_after=$(chroot "$chroot_dir" dpkg-query -W -f='${Package}\n' | wc -l)

status=0
for r in "${results[@]}"; do
  IFS='|' read -r _ _ rc _ <<<"$r"
  [ "$rc" = 0 ] || status=1
done
{
  echo "fresh Debian 12 root (debootstrap minbase, $packages_before packages, ${debootstrap_s}s) at $chroot_dir"
  echo "commit $(git -C "$chroot_dir/root/convbench" rev-parse --short=12 HEAD)"
  for r in "${results[@]}"; do
    IFS='|' read -r name command rc seconds <<<"$r"
    printf '%-55s exit %s  %dm%02ds  (%s.log)\n' "$command" "$rc" $((seconds / 60)) $((seconds % 60)) "$name"
  done
  echo "packages after: $packages_after (installed by scripts/setup.sh with their dependencies)"
  # The test command's steps, from the times it prints as each begins.
  python3 - "$work/test.log" <<'PY'
import re, sys
steps = [(m.group(1), m.group(2)) for m in
         (re.match(r"^test\.sh: (.*) \((\d\d:\d\d:\d\d)\)$", l.rstrip()) for l in open(sys.argv[1], errors="replace")) if m]
def secs(t):
    h, m, s = map(int, t.split(":"))
    return h * 3600 + m * 60 + s
for (name, start), (_, end) in zip(steps, steps[1:]):
    d = (secs(end) - secs(start)) % 86400
    print(f"  test.sh step {d // 60:3d}m{d % 60:02d}s  {name}")
PY
  tail -3 "$work/test.log" | sed 's/^/test.log: /'
} | tee "$work/fresh-debian-check.log"
exit "$status"

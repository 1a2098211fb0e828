#!/usr/bin/env bash
# Installs what convbench needs to build and test on Debian 12, when it is missing.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

packages=(build-essential cmake ccache pkg-config git
          libcli11-dev nlohmann-json3-dev libspdlog-dev libyaml-cpp-dev
          libgtest-dev libbenchmark-dev libdnnl-dev
          python3-yaml python3-torch)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "convbench setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

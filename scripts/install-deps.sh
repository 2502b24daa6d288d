#!/usr/bin/env bash
# Installs the Debian 12 packages wheelfit builds with, when any is missing. Needs root (or sudo).
set -euo pipefail
packages=(g++ cmake ninja-build pkg-config libboost1.81-dev libboost-json1.81-dev
          libtomlplusplus-dev libfmt-dev libssl-dev zlib1g-dev catch2
          clang libclang-rt-14-dev
          nginx-light python3-pip curl)  # the mirror's integration test and bench_download: a real server and clients
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Configures and builds wheelfit into build/ (or build-asan/ with --sanitize).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/build"
extra=()
if [[ "${1:-}" == "--sanitize" ]]; then
  dir="$root/build-asan"
  extra=(-DWHEELFIT_SANITIZE=ON -DWHEELFIT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug)
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" >/dev/null
cmake --build "$dir" --parallel "$(nproc)"

#!/usr/bin/env bash
# Configures and builds wheelfit into build/ (or build-asan/ with --sanitize).
#
#   scripts/build.sh              everything: the library, the CLI, the plugins, every test and benchmark
#   scripts/build.sh --demo       only what scripts/demo.sh runs: the CLI, its plugins, the farm generator
#   scripts/build.sh --sanitize   the tests under ASan + UBSan, in build-asan/ (-O1 -g1, no benchmarks)
#
# build/ is shared by the first two: the demo's objects are the full build's, so a test run after
# the demo compiles only the tests. Each step's wall time is printed (docs/benchmarks.md, "Build").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/build"
options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELFIT_BUILD_TESTS=ON -DWHEELFIT_BUILD_BENCH=ON)
targets=()
case "${1:-}" in
  --sanitize)
    dir="$root/build-asan"
    options=(-DWHEELFIT_SANITIZE=ON -DWHEELFIT_BUILD_TESTS=ON -DWHEELFIT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug
             -DCMAKE_CXX_FLAGS_DEBUG=) ;;  # wheelfit_options brings -O1 -g1
  --demo)
    options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHEELFIT_BUILD_TESTS=OFF -DWHEELFIT_BUILD_BENCH=OFF)
    targets=(--target wheelfit wheelfit-farmgen) ;;
  "") ;;
  *) echo "usage: $0 [--demo | --sanitize]" >&2; exit 2 ;;
esac
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
start=$SECONDS
cmake -S "$root" -B "$dir" "${generator[@]}" "${options[@]}" >/dev/null
cmake --build "$dir" --parallel "$(nproc)" "${targets[@]}"
echo "build: ${dir#"$root/"} ${1:-} in $((SECONDS - start)) s on $(nproc) cores"

#!/usr/bin/env bash
# Cross-builds wheelfit for Windows x86_64 on this Debian 12 machine (MinGW-w64 g++ 12, posix
# threads) into build-win/ (or the folder given), then packs wheelfit-<version>-win64.zip there.
# Installs what it needs (scripts/install-deps.sh --windows); OpenSSL is cross-built once into a
# cache outside the build folder (scripts/build-openssl-mingw.sh) and reused.
#
#   scripts/build-windows.sh [BUILD]          build everything, the tests too, and the zip
#   scripts/build-windows.sh [BUILD] --test   ... then run the tests under wine (ctest)
#
# The tests run under wine through ctest's emulator, in a wine prefix inside BUILD
# (README, "Windows"). A BUILD below a folder others may write to (/tmp) moves to
# ~/.cache/wheelfit-build/ (below). Each step's wall time is printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/build-win"
run_tests=false
for arg in "$@"; do
  case "$arg" in
    --test) run_tests=true ;;
    -*) echo "usage: $0 [BUILD] [--test]" >&2; exit 2 ;;
    *) dir="$(realpath -m "$arg")" ;;
  esac
done
# wine shows a folder others may write to (as /tmp, sticky bit or not) as writable by Everyone, and
# wheelfit.exe rightly loads no plugin below such a folder (decision 0035): a build folder under
# one is moved to ~/.cache/wheelfit-build/, so that its tests under wine can load the plugins.
others_may_write_above() {
  local d="$1"
  while [[ "$d" != / ]]; do
    d="$(dirname "$d")"
    [[ -d "$d" ]] && (( 8#$(stat -c %a "$d") & 2 )) && return 0
  done
  return 1
}
if others_may_write_above "$dir"; then
  moved="${XDG_CACHE_HOME:-$HOME/.cache}/wheelfit-build/$(printf %s "$dir" | sha256sum | cut -c1-12)-$(basename "$dir")"
  echo "build-windows: $dir lies below a folder others may write to; building in $moved instead"
  dir="$moved"
fi
start=$SECONDS
"$root/scripts/install-deps.sh" --windows
openssl_root="$("$root/scripts/build-openssl-mingw.sh")"
echo "build-windows: dependencies in $((SECONDS - start)) s (OpenSSL: $openssl_root)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
step=$SECONDS
cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64-x86_64.cmake" \
  -DWHEELFIT_OPENSSL_ROOT="$openssl_root" -DCMAKE_BUILD_TYPE=Release -DWHEELFIT_BUILD_TESTS=ON \
  -DWHEELFIT_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir" --parallel "$(nproc)"
echo "build-windows: built in $((SECONDS - step)) s on $(nproc) cores"
step=$SECONDS
(cd "$dir" && cpack -G ZIP -B "$dir/dist" >/dev/null)
echo "build-windows: $(ls "$dir"/dist/wheelfit-*-win64.zip) in $((SECONDS - step)) s"
if $run_tests; then
  step=$SECONDS
  ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)"
  echo "build-windows: tests under wine in $((SECONDS - step)) s"
fi

#!/usr/bin/env bash
# Builds the Debian packages (CPack, DEB) into dist/ and checks them with lintian:
#   wheelfit          the CLI, wheelfit-farmgen, the backend plugins, bash completion
#   libwheelfit0      the C API (libwheelfit.so.0)
#   libwheelfit-dev   headers, static libraries, the CMake package, wheelfit.pc
# Exit 1 when lintian reports an error (warnings are printed, not fatal).
#
#   scripts/package.sh [BUILD_DIR]
#
# Without BUILD_DIR: a release build of its own in build-pkg/ (-O2, no tests or benchmarks).
# With one (CI passes build/, made by scripts/build.sh): that build, its install prefix set to
# /usr, so nothing is compiled twice. Installs what it needs (the build's packages, and dpkg-dev,
# file and lintian) with apt-get when missing. scripts/check_packages.sh then tries the packages
# unpacked, without installing them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" --package
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ $# -ge 1 ]]; then
  build="$(cd "$1" && pwd)"
  [[ -f "$build/CMakeCache.txt" ]] || { echo "package: $build is not a configured build folder (run scripts/build.sh)" >&2; exit 2; }
  cmake -S "$root" -B "$build" -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
else
  build="$root/build-pkg"
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
        -DWHEELFIT_BUILD_TESTS=OFF -DWHEELFIT_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
fi
cmake --build "$build" --parallel "$(nproc)"
dist="$root/dist"
rm -rf "$dist"
mkdir -p "$dist"
# cpack installs the three components into a staging folder and writes one .deb each.
(cd "$build" && cpack -G DEB -B "$dist/cpack" >"$dist/cpack.log" 2>&1) || { cat "$dist/cpack.log" >&2; exit 1; }
mv "$dist"/cpack/*.deb "$dist/"
rm -rf "$dist/cpack"
for deb in "$dist"/*.deb; do
  echo "== $(basename "$deb")"
  dpkg-deb --field "$deb" Package Version Architecture Depends | sed 's/^/  /'
done
echo "== lintian"
# --fail-on error: warnings and notes are printed for whoever improves the packages; an error fails.
lintian --fail-on error --tag-display-limit 0 "$dist"/*.deb | sed 's/^/  /'
echo "package: OK ($(cd "$dist" && ls ./*.deb | tr '\n' ' '))"

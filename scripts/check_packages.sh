#!/usr/bin/env bash
# Tries the Debian packages in dist/ (scripts/package.sh) without installing anything: unpacks
# each with `dpkg-deb -x` into one temporary root, then, from that root only:
#   1. `wheelfit --version` names the packaged version;
#   2. `wheelfit-farmgen` writes a local index and `wheelfit resolve` picks from it for the H100
#      profile (examples/machines/x86_64-h100-cu128.toml), with the packaged plugins;
#   3. a C program (examples/embed/c/resolve.c) built with `pkg-config --cflags --libs wheelfit`
#      calls wheelfit_resolve_json with the same request: exit 0 and the same combo;
#   4. the packaged bash completion, sourced, completes `wheelfit res` and `wheelfit resolve --mach`,
#      and scripts/test_completion.sh checks it against the packaged binary's usage.
# Exit 1 naming the first check that failed.
#
#   scripts/check_packages.sh [DIST_DIR]      (default: dist/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dist="$(cd "${1:-$root/dist}" 2>/dev/null && pwd)" || { echo "check_packages: no folder ${1:-$root/dist} (run scripts/package.sh)" >&2; exit 2; }
fail() { echo "check_packages: FAIL: $*" >&2; exit 1; }
debs=("$dist"/*.deb)
[[ -e "${debs[0]}" ]] || fail "no .deb in $dist (run scripts/package.sh)"

work="$(mktemp -d "${TMPDIR:-/tmp}/wheelfit-debs.XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then echo "check_packages: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
rootfs="$work/root"
for deb in "${debs[@]}"; do
  dpkg-deb -x "$deb" "$rootfs"
  echo "-- unpacked $(basename "$deb")"
done
# Nothing of this machine's environment may change the answer; the packaged plugins only.
clean_env=(env -u WHEELFIT_POLICY -u WHEELFIT_PLUGIN_PATH -u COMFY_ENV_CUDA_WHEELS_INDEX -u CONDA_OVERRIDE_CUDA
           -u CONDA_OVERRIDE_GLIBC XDG_CACHE_HOME="$work/cache")
version="$(dpkg-deb --field "$dist"/wheelfit_*.deb Version)"

echo "-- wheelfit --version"
out="$("${clean_env[@]}" "$rootfs/usr/bin/wheelfit" --version)" || fail "wheelfit --version exited $?"
echo "  $out"
[[ "$out" == *"${version%-*}"* ]] || fail "wheelfit --version says '$out', the package is $version"

echo "-- a generated local index, resolved by the packaged wheelfit"
"${clean_env[@]}" "$rootfs/usr/bin/wheelfit-farmgen" --out "$work/index" >/dev/null || fail "wheelfit-farmgen exited $?"
set +e
"${clean_env[@]}" "$rootfs/usr/bin/wheelfit" resolve "$root/examples/demo/comfy-env.toml" --index "$work/index" \
    --machine "$root/examples/machines/x86_64-h100-cu128.toml" --no-cache >"$work/resolve.txt" 2>&1
rc=$?
set -e
[[ $rc == 0 ]] || { cat "$work/resolve.txt" >&2; fail "wheelfit resolve exited $rc, expected 0"; }
grep -q '^resolved: cu12.8/torch2.8' "$work/resolve.txt" || { cat "$work/resolve.txt" >&2; fail "resolve did not pick cu12.8/torch2.8"; }
sed -n '/^resolved:/p' "$work/resolve.txt" | sed 's/^/  /'

echo "-- a C program built with pkg-config --cflags --libs wheelfit"
export PKG_CONFIG_PATH="$rootfs/usr/lib/pkgconfig"
flags="$(pkg-config --cflags --libs wheelfit)" || fail "pkg-config cannot read wheelfit.pc"
echo "  cc resolve.c $flags"
# shellcheck disable=SC2086 # pkg-config's flags are words
cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -o "$work/resolve_c" "$root/examples/embed/c/resolve.c" $flags \
  || fail "the C program did not build against the unpacked libwheelfit-dev"
cat >"$work/request.json" <<JSON
{"configs": ["$root/examples/demo/comfy-env.toml"], "index": "$work/index", "no_cache": true,
 "machine": {"os": "linux", "cpu_arch": "x86_64", "glibc": "2.35", "python": "3.12", "torch": "2.8.0+cu128",
             "backend": "cuda", "driver_version": "580.65.06", "driver_line": "13.0", "gpus": ["9.0"]}}
JSON
set +e
"${clean_env[@]}" LD_LIBRARY_PATH="$rootfs/usr/lib" "$work/resolve_c" "$work/request.json" >"$work/c.json" 2>"$work/c.err"
rc=$?
set -e
[[ $rc == 0 ]] || { cat "$work/c.err" "$work/c.json" >&2; fail "the C program exited $rc, expected 0"; }
grep -qF '"combo":{"cuda":"12.8","torch":"2.8"}' "$work/c.json" || { head -c 800 "$work/c.json" >&2; fail "wheelfit_resolve_json did not pick cu12.8/torch2.8"; }
echo "  exit 0, combo cu12.8/torch2.8 (libwheelfit.so.0 and its plugins from the unpacked packages)"

echo "-- the packaged bash completion"
completion="$rootfs/usr/share/bash-completion/completions/wheelfit"
[[ -f "$completion" ]] || fail "the wheelfit package has no $completion"
out="$(WHEELFIT_COMPLETION="$completion" "$root/scripts/test_completion.sh" "$rootfs/usr/bin/wheelfit")" \
  || { echo "$out" | grep -v '^ok ' >&2; fail "the packaged completion (scripts/test_completion.sh, above)"; }
echo "  ${out##*$'\n'}"
echo "check_packages: OK (unpacked, nothing installed: --version, a resolve, the C API through pkg-config, completion)"

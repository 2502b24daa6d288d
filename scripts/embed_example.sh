#!/usr/bin/env bash
# The library end to end, installed: installs wheelfit from a build folder into a temporary
# prefix (`cmake --install`), then
#   1. builds examples/embed/cpp against it (find_package(wheelfit), wheelfit::wheelfit) and runs
#      it: a resolve through the example's mem:// transport must pick the cu128/torch2.8 wheel;
#   2. writes a tiny local PEP 503 index and resolves it for examples/machines/x86_64-h100-cu128.toml
#      twice: with the installed `wheelfit resolve --json` and with examples/embed/python (ctypes
#      over the installed libwheelfit.so.0, no build step); the two objects must be equal;
#   3. builds examples/embed/cpp again with wheelfit as a subproject (add_subdirectory of this
#      checkout, -DWHEELFIT_SOURCE_DIR) and runs it: the same resolve.
# Exit 1 naming the first mismatch.
#
#   scripts/embed_example.sh [BUILD_DIR]     (default: build/, as scripts/build.sh makes it)
#
# Needs cmake, a C++20 compiler, python3 and sha256sum. KEEP=1 keeps the temporary folder.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" 2>/dev/null && pwd)" || { echo "embed_example: no build folder ${1:-$root/build}" >&2; exit 2; }
fail() { echo "embed_example: FAIL: $*" >&2; exit 1; }
[[ -f "$build/CMakeCache.txt" ]] || { echo "embed_example: $build is not a configured build folder (run scripts/build.sh)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/wheelfit-embed.XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then echo "embed_example: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
prefix="$work/prefix"

# shellcheck source=scripts/lib/against_install.sh
source "$root/scripts/lib/against_install.sh"
install_build include/wheelfit/api.hpp include/wheelfit/wheelfit.h include/wheelfit/version.hpp \
              include/wheelfit/transports/http_transport.hpp include/wheelfit/semantics/policy.hpp include/wheelfit/policies/format.hpp \
              lib/cmake/wheelfit/wheelfitTargets.cmake lib/wheelfit/libwheelfit_api.a lib/libwheelfit.so.0
example="$work/cpp-build"
build_example "$root/examples/embed/cpp" "$example"
# run_example DIR: runs DIR/embed_resolve; it must pick the cu128/torch2.8 wheel.
run_example() {
  echo "-- running it"
  set +e
  "$1/embed_resolve" >"$work/cpp.out" 2>&1
  local rc=$?
  set -e
  [[ $rc == 0 ]] || { cat "$work/cpp.out" >&2; fail "embed_resolve exited $rc, expected 0"; }
  local text
  for text in "resolved: cu12.8/torch2.8 via tier 1 (bootstrap)" "mem://wheels.example.internal/simple/" \
              "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=" \
              'torch = { index = "https://download.pytorch.org/whl/cu128", version = "==2.8.*" }'; do
    grep -qF -- "$text" "$work/cpp.out" || { cat "$work/cpp.out" >&2; fail "embed_resolve's output lacks: $text"; }
  done
  sed -n '/^resolved:/p;/^  flash-attn/p' "$work/cpp.out"
}
run_example "$example"

echo "-- a local index; the installed CLI and the ctypes binding resolve it"
index="$work/index"
wheel() {  # wheel <project> <file>: an (empty) wheel file and its anchor with its real sha256
  mkdir -p "$index/$1"
  printf 'not a real wheel: %s\n' "$2" >"$index/$1/$2"
  local sha
  sha="$(sha256sum "$index/$1/$2" | cut -d' ' -f1)"
  printf '<a href="%s#sha256=%s">%s</a><br/>\n' "${2//+/%2B}" "$sha" "$2" >>"$index/$1/index.html"
}
wheel flash-attn flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl
wheel flash-attn flash_attn-2.8.3+cu126torch2.7-cp312-cp312-manylinux_2_28_x86_64.whl
wheel sageattention sageattention-2.2.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl
profile="$root/examples/machines/x86_64-h100-cu128.toml"
cat >"$work/comfy-env.toml" <<'TOML'
python = "3.12"

[cuda]
packages = ["flash-attn", "sageattention"]
TOML
clean_env=(env -u WHEELFIT_POLICY -u WHEELFIT_PLUGIN_PATH -u COMFY_ENV_CUDA_WHEELS_INDEX -u CONDA_OVERRIDE_CUDA
           -u CONDA_OVERRIDE_GLIBC XDG_CACHE_HOME="$work/cache")
set +e
"${clean_env[@]}" "$prefix/bin/wheelfit" resolve "$work/comfy-env.toml" --index "$index" --machine "$profile" --json \
    --no-cache >"$work/cli.json" 2>"$work/cli.err"
cli_rc=$?
set -e
[[ $cli_rc == 0 ]] || { cat "$work/cli.err" "$work/cli.json" >&2; fail "the installed wheelfit resolve exited $cli_rc"; }
"${clean_env[@]}" python3 - "$root/examples/embed/python" "$prefix/lib/libwheelfit.so.0" "$work" "$index" "$profile" <<'PY' \
    || fail "the ctypes binding (above)"
import json, sys, tomllib
sys.path.insert(0, sys.argv[1])
from wheelfit_ctypes import Wheelfit
lib, work, index, profile = sys.argv[2:6]
machine = tomllib.load(open(profile, "rb"))
code, obj = Wheelfit(lib).resolve({"configs": [f"{work}/comfy-env.toml"], "index": index, "machine": machine,
                                   "no_cache": True})
cli = json.load(open(f"{work}/cli.json"))
for o in (obj, cli):  # the provenance names the profile file for the CLI, the request for the C API
    o.get("machine", {}).pop("provenance", None)
if code != 0 or obj != cli:
    print(f"  exit {code}\n  ctypes: {json.dumps(obj, sort_keys=True)[:600]}\n  cli:    {json.dumps(cli, sort_keys=True)[:600]}",
          file=sys.stderr)
    sys.exit(1)
print(f"  exit 0 from both; combo {obj['combo']}, picks: " + ", ".join(p["filename"] for p in obj["packages"]))
PY
# run_c DIR: DIR/embed_resolve_c (examples/embed/c, linked to wheelfit::capi) resolves the same
# request; its object must equal the CLI's.
"${clean_env[@]}" python3 - "$work" "$index" "$profile" <<'PY' || fail "writing the C request"
import json, sys, tomllib
work, index, profile = sys.argv[1:4]
json.dump({"configs": [f"{work}/comfy-env.toml"], "index": index, "machine": tomllib.load(open(profile, "rb")),
           "no_cache": True}, open(f"{work}/request.json", "w"))
PY
run_c() {
  echo "-- the C API from C (wheelfit::capi): $1/embed_resolve_c"
  set +e
  "${clean_env[@]}" "$1/embed_resolve_c" "$work/request.json" >"$work/c.json" 2>"$work/c.err"
  local rc=$?
  set -e
  [[ $rc == 0 ]] || { cat "$work/c.err" "$work/c.json" >&2; fail "embed_resolve_c exited $rc, expected 0"; }
  python3 - "$work/c.json" "$work/cli.json" <<'PY' || fail "embed_resolve_c's object differs from the CLI's (above)"
import json, sys
c, cli = (json.load(open(p)) for p in sys.argv[1:3])
for o in (c, cli):
    o.get("machine", {}).pop("provenance", None)
    # "policy" names the plugin it came from: the subproject's library loads its own build's.
    if isinstance(o.get("policy"), str):
        o["policy"] = o["policy"].rsplit("/", 1)[-1]
def first_difference(a, b, at="$"):
    if type(a) is not type(b) or not isinstance(a, (dict, list)):
        return None if a == b else (at, a, b)
    keys = sorted(set(a) | set(b)) if isinstance(a, dict) else range(max(len(a), len(b)))
    for k in keys:
        missing = object()
        x = a.get(k, missing) if isinstance(a, dict) else (a[k] if k < len(a) else missing)
        y = b.get(k, missing) if isinstance(b, dict) else (b[k] if k < len(b) else missing)
        d = first_difference(x, y, f"{at}.{k}" if isinstance(a, dict) else f"{at}[{k}]")
        if d:
            return d
    return None
if c != cli:
    at, x, y = first_difference(c, cli)
    print(f"  first difference at {at}:\n  c:   {json.dumps(x)[:400]}\n  cli: {json.dumps(y)[:400]}", file=sys.stderr)
    sys.exit(1)
print("  exit 0; the same object as the CLI's")
PY
}
run_c "$example"

# The subproject builds only what the example links (the library, the C API, the CUDA plugin), at
# -O0 without debug information: it checks that add_subdirectory works, not how fast the code runs.
echo "-- the same examples with wheelfit as a subproject (add_subdirectory $root)"
subproject="$work/cpp-subproject"
build_example "$root/examples/embed/cpp" "$subproject" -DWHEELFIT_SOURCE_DIR="$root" -DCMAKE_BUILD_TYPE=Debug \
              -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_C_FLAGS_DEBUG=-O0
run_example "$subproject"
run_c "$subproject"
echo "embed_example: OK (the installed C++ package, the installed C API from Python and from C, and the subproject build resolve as the CLI does)"

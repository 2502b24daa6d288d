#!/usr/bin/env bash
# The plugin SDK end to end, out of tree: installs wheelfit from a build folder into a temporary
# prefix (`cmake --install`), builds examples/backend-plugin (the made-up Acme NPU backend)
# against that installed package, writes a tiny local PEP 503 index and a machine profile for
# it, and checks that the installed wheelfit loads the plugin (WHEELFIT_PLUGIN_PATH) and resolves
# with it: combo npu 1.2 / torch 2.8, tier bootstrap. Exit 1 naming the first mismatch.
#
#   scripts/sdk_example.sh [BUILD_DIR]     (default: build/, as scripts/build.sh makes it)
#
# Needs cmake, a C++20 compiler and sha256sum; python3 for the full checks (without it, grep
# checks the essentials). KEEP=1 keeps the temporary folder and prints where it is.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" 2>/dev/null && pwd)" || { echo "sdk_example: no build folder ${1:-$root/build}" >&2; exit 2; }

fail() { echo "sdk_example: FAIL: $*" >&2; exit 1; }
[[ -f "$build/CMakeCache.txt" ]] || { echo "sdk_example: $build is not a configured build folder (run scripts/build.sh)" >&2; exit 2; }
have_python=0
command -v python3 >/dev/null && have_python=1
# has <file> <text>...: each text is in the file (wheelfit's compact JSON), for when python3 is absent.
has() {
  local file="$1" text
  shift
  for text in "$@"; do grep -qF -- "$text" "$file" || fail "$file lacks $text"; done
}

work="$(mktemp -d "${TMPDIR:-/tmp}/wheelfit-sdk.XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then echo "sdk_example: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
prefix="$work/prefix"

# shellcheck source=scripts/lib/against_install.sh
source "$root/scripts/lib/against_install.sh"
install_build bin/wheelfit include/wheelfit/registry/plugin_abi.h include/wheelfit/registry/plugin_support.hpp \
              lib/cmake/wheelfit/wheelfitConfig.cmake lib/cmake/wheelfit/wheelfitConfigVersion.cmake \
              lib/cmake/wheelfit/wheelfitPluginSdkTargets.cmake lib/cmake/wheelfit/WheelfitBackendPlugin.cmake \
              lib/cmake/wheelfit/wheelfit_embed_text.cmake lib/cmake/wheelfit/wheelfit_backend_plugin.map \
              lib/wheelfit/plugins/libwheelfit_backend_cuda.so lib/wheelfit/plugins/libwheelfit_backend_rocm.so
example="$work/example-build"
build_example "$root/examples/backend-plugin" "$example"
plugins="$example/plugins"
[[ -f "$plugins/libacme_npu.so" ]] || fail "the example did not produce $plugins/libacme_npu.so"
if command -v nm >/dev/null; then
  exported="$(nm -D --defined-only "$plugins/libacme_npu.so" | awk '{print $NF}' | sort -u | tr '\n' ' ')"
  [[ "$exported" == "wheelfit_backend_entry " ]] || fail "libacme_npu.so exports '$exported', expected only wheelfit_backend_entry"
fi

echo "-- writing a local index, a config and a machine profile"
index="$work/index"
# wheel <project> <file>: an (empty) wheel file and its anchor, with its real sha256, on the project's page.
wheel() {
  mkdir -p "$index/$1"
  printf 'not a real wheel: %s\n' "$2" >"$index/$1/$2"
  local sha href
  sha="$(sha256sum "$index/$1/$2" | cut -d' ' -f1)"
  href="${2//+/%2B}#sha256=$sha"
  printf '<a href="%s">%s</a><br/>\n' "$href" "$2" >>"$index/$1/links"
}
wheel acme-ops acme_ops-1.0+npu1.2torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl
wheel acme-ops acme_ops-1.0+npu1.1torch2.7-cp312-cp312-manylinux_2_28_x86_64.whl
wheel acme-ops acme_ops-1.1+npu1.2torch2.8-cp313-cp313-manylinux_2_28_x86_64.whl
wheel npu-kernels npu_kernels-0.3+npu1.2torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl
for p in acme-ops npu-kernels; do
  { echo "<!DOCTYPE html><html><body>"; cat "$index/$p/links"; echo "</body></html>"; } >"$index/$p/index.html"
  rm "$index/$p/links"
done
cat >"$work/comfy-env.toml" <<'TOML'
python = "3.12"

[cuda]
packages = ["acme-ops", "npu-kernels"]
TOML
cat >"$work/machine.toml" <<'TOML'
# An Acme NPU (made up) box: acme-n3, torch 2.8.0 built for NPU line 1.2.
os = "linux"
cpu_arch = "x86_64"
glibc = "2.35"
python = "3.12"
backend = "npu"
torch = "2.8.0+npu1.2"
gpus = ["acme-n3"]
driver_line = "1.2"
TOML

# The installed wheelfit, with the example's plugin folder listed before its built-in one, and
# nothing from this shell's environment that could change the answer.
wheelfit() {
  env -u WHEELFIT_POLICY -u ACME_NPU_WHEELS_INDEX -u COMFY_ENV_CUDA_WHEELS_INDEX -u CONDA_OVERRIDE_CUDA \
      -u CONDA_OVERRIDE_GLIBC XDG_CACHE_HOME="$work/cache" WHEELFIT_PLUGIN_PATH="$plugins" "$prefix/bin/wheelfit" "$@"
}

echo "-- wheelfit plugins"
wheelfit plugins >"$work/plugins.txt" 2>&1 || { cat "$work/plugins.txt" >&2; fail "wheelfit plugins exited $?"; }
sed -n '/^npu:/,/^$/p' "$work/plugins.txt"
wheelfit plugins --json >"$work/plugins.json" 2>"$work/plugins.err" || { cat "$work/plugins.err" >&2; fail "wheelfit plugins --json"; }
if [[ $have_python == 0 ]]; then
  has "$work/plugins.json" '"name":"npu"' '"name":"cuda"' '"name":"rocm"' '"source":"WHEELFIT_PLUGIN_PATH"' \
      '"policy_version":"2026-12-01"' '"skipped":[]'
  if grep -qF '"policy_error"' "$work/plugins.json"; then fail "a policy does not parse: $(cat "$work/plugins.json")"; fi
else python3 - "$work/plugins.json" "$plugins" "$prefix" <<'PY' || fail "wheelfit plugins --json (above)"
import json, os, sys
v = json.load(open(sys.argv[1]))
plugins, prefix = sys.argv[2], sys.argv[3]
errors = []
def expect(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, expected {want!r}")
names = sorted(b["name"] for b in v["backends"])
expect("backends", names, ["cuda", "npu", "rocm"])
dirs = [(d["path"], d["source"], d["error"]) for d in v["plugin_dirs"]]
expect("plugin_dirs", [(os.path.realpath(p), s, e) for p, s, e in dirs],
       [(os.path.realpath(plugins), "WHEELFIT_PLUGIN_PATH", None),
        (os.path.realpath(os.path.join(prefix, "lib/wheelfit/plugins")), "built-in", None)])
expect("plugin_dir", v["plugin_dir"], plugins)
expect("skipped", v["skipped"], [])
npu = next((b for b in v["backends"] if b["name"] == "npu"), None)
if npu:
    expect("npu file", os.path.realpath(npu["file"]), os.path.realpath(os.path.join(plugins, "libacme_npu.so")))
    expect("npu policy_error", npu.get("policy_error"), None)
    expect("npu policy_version", npu["policy_version"], "2026-12-01")
    expect("npu line", npu.get("line"), {"key": "npu", "prefix": "npu", "name": "Acme NPU"})
    expect("npu combo_labels", npu.get("combo_labels"), ["npu{line}torch{torch}"])
    expect("npu fallback", npu.get("fallback"), {"x86_64": {"npu": "1.2", "torch": "2.8"}})
    expect("npu detection", npu["detection"], True)
for e in errors:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
fi

echo "-- wheelfit resolve --json"
set +e
wheelfit resolve "$work/comfy-env.toml" --index "$index" --machine "$work/machine.toml" --json >"$work/resolve.json" 2>"$work/resolve.err"
rc=$?
set -e
[[ $rc == 0 ]] || { cat "$work/resolve.err" "$work/resolve.json" >&2; fail "wheelfit resolve exited $rc, expected 0"; }
if [[ $have_python == 0 ]]; then
  has "$work/resolve.json" '"combo":{"npu":"1.2","torch":"2.8"},"tier":"bootstrap"' \
      '"filename":"acme_ops-1.0+npu1.2torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"' \
      '"filename":"npu_kernels-0.3+npu1.2torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"'
  echo "  combo npu 1.2 / torch 2.8, tier bootstrap (checked with grep: no python3)"
else python3 - "$work/resolve.json" <<'PY' || { cat "$work/resolve.err" >&2; fail "wheelfit resolve --json (above)"; }
import json, sys
v = json.load(open(sys.argv[1]))
errors = []
def expect(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, expected {want!r}")
expect("combo", v.get("combo"), {"npu": "1.2", "torch": "2.8"})
expect("tier", v.get("tier"), "bootstrap")
picks = {p["name"]: p["filename"] for p in v.get("packages", [])}
expect("picks", picks, {
    "acme-ops": "acme_ops-1.0+npu1.2torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl",
    "npu-kernels": "npu_kernels-0.3+npu1.2torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl",
})
unchecked = sorted({d for p in v.get("packages", []) for d in p.get("unchecked", [])})
expect("unchecked demands", unchecked, [])
torch = next((p for p in v.get("pins", []) if p["name"] == "torch"), None)
expect("torch pin", torch and (torch["version"], torch["index"]), ("==2.8.*", "https://download.acme.example/whl/npu1.2"))
for e in errors:
    print("  " + e, file=sys.stderr)
if not errors:
    print(f"  combo npu {v['combo']['npu']} / torch {v['combo']['torch']}, tier {v['tier']}: " + ", ".join(sorted(picks.values())))
sys.exit(1 if errors else 0)
PY
fi
echo "sdk_example: OK (the installed SDK built an out-of-tree backend that the installed wheelfit loaded and resolved with)"

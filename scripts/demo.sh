#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run a demo resolve against a
# full-grid index generated from the policy data (no network needed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
out="$root/build/demo"
rm -rf "$out/index"
"$root/build/apps/farmgen/wheelfit-farmgen" --out "$out/index" >/dev/null
echo "== wheelfit resolve (H100, torch 2.8.0+cu128, Python 3.12, x86_64) =="
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" \
  --index "$out/index" --machine "$root/examples/machines/x86_64-h100-cu128.toml" -o "$out/pixi.toml"
echo
echo "== the same packages on a GTX 1080 (sm_61): why nothing fits =="
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" \
  --index "$out/index" --machine "$root/examples/machines/x86_64-gtx1080-cu128.toml" | head -n 30 || true

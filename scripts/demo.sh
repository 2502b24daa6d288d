#!/usr/bin/env bash
# The README's first command: install what is missing, build what the demo runs (the CLI, its
# plugins and the farm generator; no tests), and run demo resolves against full-grid indexes
# generated from the backends' policy data, CUDA and ROCm (no network needed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" --demo
"$root/scripts/build.sh" --demo
out="$root/build/demo"
rm -rf "$out/index"
"$root/build/scripts/farmgen/wheelfit-farmgen" --out "$out/index" >/dev/null
echo "== wheelfit resolve (H100, torch 2.8.0+cu128, Python 3.12, x86_64) =="
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" \
  --index "$out/index" --machine "$root/examples/machines/x86_64-h100-cu128.toml" -o "$out/pixi.toml"
echo
echo "== the same packages on a GTX 1080 (sm_61): why nothing fits =="
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" \
  --index "$out/index" --machine "$root/examples/machines/x86_64-gtx1080-cu128.toml" | head -n 30 || true
echo
echo "== an RTX 5090 (sm_120) on torch 2.8.0+cu126: torch itself has no kernel for it, the root cause =="
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" \
  --index "$out/index" --machine "$root/examples/machines/x86_64-rtx5090-cu126.toml" | head -n 8 || true
echo
echo "== ROCm: an MI250X (gfx90a), torch 2.7.1+rocm6.3, against a generated ROCm index (--index) =="
rm -rf "$out/rocm-index"
"$root/build/scripts/farmgen/wheelfit-farmgen" --backend rocm --out "$out/rocm-index" >/dev/null
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" \
  --index "$out/rocm-index" --machine "$root/examples/machines/x86_64-mi250-rocm63.toml"
echo
echo "== ROCm: an RX 580 (gfx803), which no PyTorch ROCm build targets =="
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" \
  --index "$out/rocm-index" --machine "$root/examples/machines/x86_64-rx580-rocm.toml" | head -n 12 || true
echo
echo "== deliver: the H100's picks downloaded and sha256-verified from a farm with real wheel files =="
rm -rf "$out/files-index" "$out/wheels" "$out/mirror" "$out/fleet"
# Real wheel files for the config's four packages only (the whole farm's 14,000 take ~30 s to write).
"$root/build/scripts/farmgen/wheelfit-farmgen" --out "$out/files-index" --with-files \
  --only flash_attn,nvdiffrast,cumesh,sageattention >/dev/null
"$root/build/apps/wheelfit/wheelfit" download "$root/examples/demo/comfy-env.toml" --index "$out/files-index" \
  --machine "$root/examples/machines/x86_64-h100-cu128.toml" -d "$out/wheels" 2>/dev/null | sed -n '/^downloads:/,$p'
echo
echo "== mirror: a static index for a fleet (H100 + GH200), to serve from $out/mirror/current =="
mkdir -p "$out/fleet"
cp "$root/examples/machines/x86_64-h100-cu128.toml" "$root/examples/machines/aarch64-gh200.toml" "$out/fleet/"
"$root/build/apps/wheelfit/wheelfit" mirror "$root/examples/demo/comfy-env.toml" --index "$out/files-index" \
  --machines "$out/fleet" --out "$out/mirror" 2>/dev/null | sed -n '/^summary:/,$p'
echo
echo "== the GH200 resolved against the mirror =="
"$root/build/apps/wheelfit/wheelfit" resolve "$root/examples/demo/comfy-env.toml" --index "$out/mirror/current" \
  --machine "$root/examples/machines/aarch64-gh200.toml" | head -n 8
